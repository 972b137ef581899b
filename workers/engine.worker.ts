// The engine worker: owns the WebGPU device and exposes EngineApi to the page via comlink.
// Wiring only: the engine (worker-engine.ts), the host, device acquisition and the self-check live elsewhere.
import * as Comlink from 'comlink';
import { engine } from './worker-engine';

Comlink.expose(engine);
