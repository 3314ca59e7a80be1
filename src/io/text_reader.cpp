// TextReader: the bounds-checked file cursor of tessera's mesh readers.
#include "text_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace tessera::io::detail {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
}  // namespace

std::size_t TextReader::line_of(std::size_t offset) const {
  const std::size_t end = std::min(offset, bytes_.size());
  return 1 + std::size_t(std::count(bytes_.begin(), bytes_.begin() + std::ptrdiff_t(end), '\n'));
}

void TextReader::skip_space() {
  while (pos_ < bytes_.size()) {
    const char c = bytes_[pos_];
    if (is_space(c)) {
      ++pos_;
    } else if (hash_comments_ && c == '#') {
      while (pos_ < bytes_.size() && bytes_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

std::string_view TextReader::token_or_empty() {
  skip_space();
  tok_ = pos_;
  while (pos_ < bytes_.size() && !is_space(bytes_[pos_]) && !(hash_comments_ && bytes_[pos_] == '#')) ++pos_;
  return bytes_.substr(tok_, pos_ - tok_);
}

std::string_view TextReader::token(const char* what) {
  const std::string_view t = token_or_empty();
  if (t.empty()) fail_line(bytes_.size(), "the file ends where ", what, " was expected; the file is truncated");
  return t;
}

std::string_view TextReader::peek_token() {
  const std::size_t save_pos = pos_, save_tok = tok_;
  const std::string_view t = token_or_empty();
  pos_ = save_pos;
  tok_ = save_tok;
  return t;
}

void TextReader::end_line(const char* after_what) {
  while (pos_ < bytes_.size() && (bytes_[pos_] == ' ' || bytes_[pos_] == '\t' || bytes_[pos_] == '\r')) ++pos_;
  if (pos_ >= bytes_.size()) fail_line(pos_, "the file ends after ", after_what, "; the file is truncated");
  if (bytes_[pos_] != '\n')
    fail_line(pos_, "unexpected '", printable(bytes_.substr(pos_, 20)), "' after ", after_what,
              " (expected the end of the line)");
  ++pos_;
}

std::string_view TextReader::rest_of_line() {
  const std::size_t start = pos_;
  while (pos_ < bytes_.size() && bytes_[pos_] != '\n') ++pos_;
  std::string_view s = bytes_.substr(start, pos_ - start);
  if (pos_ < bytes_.size()) ++pos_;
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

long long TextReader::integer(const char* what, long long lo, long long hi) {
  const std::string_view t = token(what);
  return integer_at(t, tok_, what, lo, hi);
}

long long TextReader::integer_at(std::string_view t, std::size_t at, const char* what, long long lo,
                                 long long hi) const {
  long long v = 0;
  const char* first = t.data();
  if (!t.empty() && t.front() == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    fail_line(at, what, " '", printable(t), "' is out of range (allowed: ", lo, " to ", hi, ")");
  if (ec != std::errc() || ptr != t.data() + t.size())
    fail_line(at, "expected ", what, " (an integer), found '", printable(t), "'");
  if (v < lo || v > hi) fail_line(at, what, " ", v, " is out of range (allowed: ", lo, " to ", hi, ")");
  return v;
}

double TextReader::real(const char* what) {
  const std::string_view t = token(what);
  return real_at(t, tok_, what);
}

double TextReader::real_at(std::string_view t, std::size_t at, const char* what) const {
  double v = 0;
  const char* first = t.data();
  if (!t.empty() && t.front() == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range) fail_line(at, what, " '", printable(t), "' is out of the range of a double");
  if (ec != std::errc() || ptr != t.data() + t.size())
    fail_line(at, "expected ", what, " (a number), found '", printable(t), "'");
  if (!std::isfinite(v)) fail_line(at, what, " is '", printable(t), "', not a finite number");
  return v;
}

void TextReader::check_count(long long count, std::size_t min_bytes, const char* what) const {
  if (count < 0) fail_token(what, " ", count, " is negative");
  if (min_bytes == 0) min_bytes = 1;
  if (std::uint64_t(count) > remaining() / min_bytes)
    fail_token(what, " ", count, " cannot fit into the remaining ", remaining(), " bytes of the file (each needs at least ",
               min_bytes, "); the count is wrong or the file is truncated");
}

void TextReader::check_binary(std::uint64_t count, std::uint64_t item_bytes, const char* what) const {
  if (item_bytes != 0 && count > remaining() / item_bytes)
    fail_offset(pos_, what, ": ", count, " items of ", item_bytes, " bytes do not fit into the remaining ", remaining(),
                " bytes of the file; the count is wrong or the file is truncated");
}

std::string printable(std::string_view s) {
  std::string out;
  const std::size_t n = std::min<std::size_t>(s.size(), 40);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 32 && c < 127) ? char(c) : '?';
  }
  if (s.size() > n) out += "...";
  return out;
}

void warn(std::vector<std::string>* warnings, const std::string& message) {
  if (warnings)
    warnings->push_back(message);
  else
    std::cerr << "tessera: warning: " << message << '\n';
}

void validate_mesh(const fem::Mesh& mesh, const std::string& name, std::span<const long long> element_ids,
                   std::span<const long long> vertex_ids) {
  try {
    mesh.validate(name, element_ids, vertex_ids);
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find(name) == std::string::npos) fail(name, ": ", message);
    throw;
  }
}

std::string read_file(const std::string& path, const char* reader) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(reader, ": cannot open '", path, "' for reading; check that the file exists and is readable");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(reader, ": error while reading '", path, "'");
  return std::move(ss).str();
}

}  // namespace tessera::io::detail
