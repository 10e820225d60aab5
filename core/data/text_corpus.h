// A character-level corpus: UTF-8 text decoded to code points, mapped to a dense alphabet.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct TextCorpus {
  std::vector<uint32_t> alphabet;  // code point of each token id, sorted
  std::vector<int64_t> tokens;     // the corpus as token ids
  std::vector<std::string> files;  // files read, in order
  int64_t invalid_bytes = 0;       // bytes that were not valid UTF-8 (read as U+FFFD)
  std::string label(int64_t token) const;  // printable label: "a", "\\n", "␣"
};

// path: a UTF-8 file, or a directory whose regular files (not *.dat, not symlinks) are read in
// name order. Throws attn::Error naming the path (and, for the default corpus, the package).
TextCorpus load_text_corpus(const std::string& path);

// Cross-entropy (nats) of the add-one-smoothed unigram model of tokens[0, split) evaluated on
// tokens[split, end): the loss a model that ignores context would reach.
double unigram_cross_entropy(const TextCorpus& corpus, int64_t split);

// UTF-8 encoding of one code point.
std::string utf8_encode(uint32_t cp);

// Code points of UTF-8 text; malformed sequences become U+FFFD, counted in *invalid.
std::vector<uint32_t> utf8_decode(const std::string& text, int64_t* invalid);

}  // namespace attn
