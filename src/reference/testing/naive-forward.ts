// A deliberately plain transformer over a whole sequence (no paging, no batching, no arenas),
// written independently of ops.ts so tests can check forward.ts against it. Not for serving.
import { dequantize } from '../dequant';
import type { ModelDesc } from '../../model/desc';

type Vec = number[];

/** Logits [vocab] after the last of `tokens`, recomputing everything from position 0. */
export function naiveForward(model: ModelDesc, tokens: number[]): number[] {
  const c = model.config;
  const get = (name: string): Float32Array => {
    const t = model.tensors.get(name);
    if (!t) throw new Error(`missing ${name}`);
    return dequantize(t);
  };
  const has = (name: string): boolean => model.tensors.has(name);
  // W [out, in] times x [in] -> [out]
  const linear = (w: Float32Array, x: Vec, bias?: Float32Array): Vec =>
    Array.from({ length: w.length / x.length }, (_, o) =>
      x.reduce((s, xi, i) => s + xi * w[o * x.length + i], bias ? bias[o] : 0),
    );
  const norm = (x: Vec, w: Float32Array): Vec => {
    const rms = Math.sqrt(x.reduce((s, a) => s + a * a, 0) / x.length + c.rmsNormEps);
    return x.map((a, i) => (a / rms) * w[i]);
  };
  // gemma3: sliding layers rotate with their own base, unscaled; linear scaling divides positions
  const invFreqOf = (l: number): number[] => {
    const local = c.layerWindows[l]! > 0 && c.slidingRopeTheta !== null;
    const theta = local ? c.slidingRopeTheta! : c.ropeTheta;
    const linear = !local && c.ropeScaling?.type === 'linear' ? c.ropeScaling.factor : 1;
    return Array.from({ length: c.headDim / 2 }, (_, i) => Math.pow(theta, (-2 * i) / c.headDim) / linear);
  };
  const rotate = (head: Vec, pos: number, invFreq: number[]): Vec => {
    const half = c.headDim / 2;
    return head.map((a, i) => {
      const angle = pos * invFreq[i % half];
      return i < half
        ? a * Math.cos(angle) - head[i + half] * Math.sin(angle)
        : a * Math.cos(angle) + head[i - half] * Math.sin(angle);
    });
  };
  const heads = (x: Vec, n: number): Vec[] => Array.from({ length: n }, (_, h) => x.slice(h * c.headDim, (h + 1) * c.headDim));

  const embed = get('model.embed_tokens.weight');
  const cap = (v: number, softcap: number): number => (softcap > 0 ? softcap * Math.tanh(v / softcap) : v);
  const gelu = (a: number): number => 0.5 * a * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (a + 0.044715 * a ** 3)));
  const act = (a: number): number => (c.mlpActivation === 'gelu_tanh' ? gelu(a) : a / (1 + Math.exp(-a)));
  // gemma normalizes each sublayer's output before the residual add
  const outputNorm = (o: Vec, name: string): Vec => (c.postNorms ? norm(o, get(name)) : o);
  let xs: Vec[] = tokens.map((id) => Array.from(embed.subarray(id * c.hiddenSize, (id + 1) * c.hiddenSize), (a) => a * c.embedScale));
  for (let l = 0; l < c.numLayers; l++) {
    const invFreq = invFreqOf(l);
    const window = c.layerWindows[l]!;
    const p = `model.layers.${l}.`;
    const bias = (n: string): Float32Array | undefined => (has(`${p}self_attn.${n}_proj.bias`) ? get(`${p}self_attn.${n}_proj.bias`) : undefined);
    const [wq, wk, wv, wo] = ['q', 'k', 'v', 'o'].map((n) => get(`${p}self_attn.${n}_proj.weight`));
    const hs = xs.map((x) => norm(x, get(`${p}input_layernorm.weight`)));
    const qkNorm = (hd: Vec[], which: string): Vec[] => (c.qkNorm ? hd.map((h) => norm(h, get(`${p}self_attn.${which}_norm.weight`))) : hd);
    const qs = hs.map((h, pos) => qkNorm(heads(linear(wq, h, bias('q')), c.numHeads), 'q').map((hd) => rotate(hd, pos, invFreq)));
    const ks = hs.map((h, pos) => qkNorm(heads(linear(wk, h, bias('k')), c.numKvHeads), 'k').map((hd) => rotate(hd, pos, invFreq)));
    const vs = hs.map((h) => heads(linear(wv, h, bias('v')), c.numKvHeads));
    xs = xs.map((x, t) => {
      const attn: Vec = [];
      for (let h = 0; h < c.numHeads; h++) {
        const kh = Math.floor(h / (c.numHeads / c.numKvHeads));
        // HF's sliding mask: key j is hidden from query t when t - j >= window
        const scores = ks.slice(0, t + 1).map((k, j) =>
          window > 0 && t - j >= window ? -Infinity : cap(k[kh].reduce((s, a, d) => s + a * qs[t][h][d], 0) * c.attentionScale, c.attnLogitSoftcap),
        );
        const m = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - m));
        const z = e.reduce((a, b) => a + b, 0);
        for (let d = 0; d < c.headDim; d++) attn.push(e.reduce((s, w, j) => s + (w / z) * vs[j][kh][d], 0));
      }
      const o = outputNorm(linear(wo, attn), `${p}post_attention_layernorm.weight`);
      return x.map((a, i) => a + o[i]);
    });
    xs = xs.map((x) => {
      const h = norm(x, get(`${p}${c.postNorms ? 'pre_feedforward_layernorm' : 'post_attention_layernorm'}.weight`));
      const g = linear(get(`${p}mlp.gate_proj.weight`), h);
      const u = linear(get(`${p}mlp.up_proj.weight`), h);
      const down = outputNorm(linear(get(`${p}mlp.down_proj.weight`), g.map((a, i) => act(a) * u[i])), `${p}post_feedforward_layernorm.weight`);
      return x.map((a, i) => a + down[i]);
    });
  }
  const last = norm(xs[xs.length - 1], get('model.norm.weight'));
  return linear(has('lm_head.weight') ? get('lm_head.weight') : embed, last).map((v) => cap(v, c.finalLogitSoftcap));
}
