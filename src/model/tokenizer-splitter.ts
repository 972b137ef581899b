// Finds added-token strings (e.g. "<|im_end|>") inside text: leftmost, longest match first,
// the way @huggingface/tokenizers splits its input. Not a tokenizer: it only locates strings.

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Set when the path from the root to this node spells a whole word. */
  word: string | null;
}

export interface TokenMatch {
  /** UTF-16 offset of the match in the searched text. */
  start: number;
  content: string;
}

export class TokenSplitter {
  private readonly root: TrieNode = { children: new Map(), word: null };
  readonly isEmpty: boolean;

  constructor(words: Iterable<string>) {
    let numWords = 0;
    for (const word of words) {
      if (word.length === 0) continue;
      let node = this.root;
      // Walk UTF-16 code units, as the library's DictionarySplitter does.
      for (let i = 0; i < word.length; i++) {
        const unit = word[i];
        let next = node.children.get(unit);
        if (!next) {
          next = { children: new Map(), word: null };
          node.children.set(unit, next);
        }
        node = next;
      }
      node.word = word;
      numWords++;
    }
    this.isEmpty = numWords === 0;
  }

  /** Non-overlapping matches, scanning left to right; at each position the longest word wins. */
  matches(text: string): TokenMatch[] {
    const found: TokenMatch[] = [];
    if (this.isEmpty) return found;
    let i = 0;
    while (i < text.length) {
      let node: TrieNode | undefined = this.root;
      let match: string | null = null;
      for (let j = i; j < text.length; j++) {
        node = node.children.get(text[j]);
        if (!node) break;
        if (node.word !== null) match = node.word;
      }
      if (match !== null) {
        found.push({ start: i, content: match });
        i += match.length;
      } else {
        i++;
      }
    }
    return found;
  }

  /** Text cut at every match: matched words and the (non-empty) text between them, in order. */
  split(text: string): string[] {
    const sections: string[] = [];
    let prev = 0;
    for (const { start, content } of this.matches(text)) {
      if (start > prev) sections.push(text.slice(prev, start));
      sections.push(content);
      prev = start + content.length;
    }
    if (prev < text.length) sections.push(text.slice(prev));
    return sections;
  }
}
