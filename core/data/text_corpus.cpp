#include "core/data/text_corpus.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/base/error.h"

namespace attn {
namespace fs = std::filesystem;

namespace {

const char* kFortunes = "/usr/share/games/fortunes";

std::string missing_hint(const std::string& path) {
  if (path.rfind(kFortunes, 0) == 0)
    return " (it is Debian's fortunes corpus: sudo apt-get install fortunes-min fortunes)";
  return "";
}

// Decodes UTF-8; malformed sequences become U+FFFD and are counted.
void decode_utf8(const std::string& s, std::vector<uint32_t>& out, int64_t& invalid) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      const unsigned char cc = s[i + k];
      ok = (cc >> 6) == 0x2;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++invalid;
      ++i;
    } else {
      out.push_back(cp);
      i += len;
    }
  }
}

}  // namespace

std::vector<uint32_t> utf8_decode(const std::string& text, int64_t* invalid) {
  std::vector<uint32_t> out;
  int64_t bad = 0;
  decode_utf8(text, out, bad);
  if (invalid) *invalid = bad;
  return out;
}

std::string utf8_encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

std::string TextCorpus::label(int64_t token) const {
  const uint32_t cp = alphabet.at(token);
  if (cp == '\n') return "\\n";
  if (cp == '\t') return "\\t";
  if (cp == ' ') return "\xE2\x90\xA3";  // U+2423 OPEN BOX
  if (cp < 0x20 || cp == 0x7F) {
    char buf[8];
    snprintf(buf, sizeof buf, "\\x%02X", cp);
    return buf;
  }
  return utf8_encode(cp);
}

TextCorpus load_text_corpus(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error("task.text_path: " + path + " does not exist" + missing_hint(path));
  TextCorpus corpus;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const auto p = entry.path();
      if (entry.is_symlink() || !entry.is_regular_file() || p.extension() == ".dat") continue;
      corpus.files.push_back(p.string());
    }
    std::sort(corpus.files.begin(), corpus.files.end());
    if (corpus.files.empty())
      throw Error("task.text_path: directory " + path + " holds no text files" + missing_hint(path));
  } else {
    corpus.files.push_back(path);
  }
  std::vector<uint32_t> cps;
  for (const auto& f : corpus.files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw Error("task.text_path: cannot read " + f);
    std::stringstream ss;
    ss << in.rdbuf();
    decode_utf8(ss.str(), cps, corpus.invalid_bytes);
  }
  if (cps.empty()) throw Error("task.text_path: " + path + " is empty");
  corpus.alphabet = cps;
  std::sort(corpus.alphabet.begin(), corpus.alphabet.end());
  corpus.alphabet.erase(std::unique(corpus.alphabet.begin(), corpus.alphabet.end()),
                        corpus.alphabet.end());
  std::map<uint32_t, int64_t> index;
  for (size_t i = 0; i < corpus.alphabet.size(); ++i) index[corpus.alphabet[i]] = i;
  corpus.tokens.reserve(cps.size());
  for (uint32_t cp : cps) corpus.tokens.push_back(index[cp]);
  return corpus;
}

double unigram_cross_entropy(const TextCorpus& corpus, int64_t split) {
  const size_t V = corpus.alphabet.size();
  std::vector<double> counts(V, 1.0);  // add-one smoothing
  for (int64_t i = 0; i < split; ++i) counts[corpus.tokens[i]] += 1.0;
  const double total = split + static_cast<double>(V);
  double nll = 0;
  const int64_t n = corpus.tokens.size();
  for (int64_t i = split; i < n; ++i) nll -= std::log(counts[corpus.tokens[i]] / total);
  return nll / std::max<int64_t>(1, n - split);
}

}  // namespace attn
