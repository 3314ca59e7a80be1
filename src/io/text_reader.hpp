#pragma once
/// \file text_reader.hpp
/// `TextReader`: a bounds-checked cursor over the bytes of a mesh file, shared by tessera's
/// mesh readers. It reads whitespace-separated tokens, integers and reals (ASCII) and raw
/// little-endian values (binary), and every error it raises names the file and the line
/// (ASCII) or the byte offset (binary) where the problem is.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/mesh.hpp"

namespace tessera::io::detail {

/// Cursor over a file's bytes (see the file comment). The bytes must outlive the reader.
class TextReader {
 public:
  /// Reads `bytes`; `name` (a file name) is put into every error message. With
  /// `hash_comments`, a '#' starts a comment that runs to the end of its line.
  TextReader(std::string_view bytes, std::string name, bool hash_comments = false)
      : bytes_(bytes), name_(std::move(name)), hash_comments_(hash_comments) {}

  /// The file name given at construction.
  const std::string& name() const { return name_; }
  /// Current position (bytes from the start of the file).
  std::size_t offset() const { return pos_; }
  /// Moves the cursor to byte `offset` (at most size()).
  void seek(std::size_t offset) { pos_ = offset < bytes_.size() ? offset : bytes_.size(); }
  /// Number of bytes of the file.
  std::size_t size() const { return bytes_.size(); }
  /// Bytes after the cursor.
  std::size_t remaining() const { return bytes_.size() - pos_; }
  /// The whole file.
  std::string_view bytes() const { return bytes_; }
  /// 1-based line number of byte `offset`.
  std::size_t line_of(std::size_t offset) const;

  /// Skips blanks, line breaks and (with hash_comments) comments.
  void skip_space();
  /// True when only blanks (and comments) are left.
  bool at_end() {
    skip_space();
    return pos_ >= bytes_.size();
  }
  /// Next whitespace-separated token; fails at the end of the file, saying that `what`
  /// was expected. The token's start is remembered for error messages (token_offset()).
  std::string_view token(const char* what);
  /// Like token(), but returns an empty view at the end of the file.
  std::string_view token_or_empty();
  /// Start of the last token read.
  std::size_t token_offset() const { return tok_; }
  /// Peeks at the next token without consuming it (empty at the end of the file).
  std::string_view peek_token();
  /// Consumes the rest of the current line (blanks and a carriage return only) and its line
  /// break; fails when anything else is found there.
  void end_line(const char* after_what);
  /// The rest of the current line (without its line break), consumed.
  std::string_view rest_of_line();

  /// Next token as an integer in [lo, hi]; fails naming `what` otherwise.
  long long integer(const char* what, long long lo, long long hi);
  /// Next token as a finite real; fails naming `what` otherwise (NaN and inf included).
  double real(const char* what);
  /// integer() and real() of a given text `t` that starts at byte `at` of the file (a value
  /// taken from a line), failing at that line.
  long long integer_at(std::string_view t, std::size_t at, const char* what, long long lo, long long hi) const;
  double real_at(std::string_view t, std::size_t at, const char* what) const;
  /// Checks that `count` items of at least `min_bytes` bytes each fit into the rest of the
  /// file; fails (before anything is allocated) naming `what` otherwise.
  void check_count(long long count, std::size_t min_bytes, const char* what) const;

  /// Reads a little-endian (native) value of type T from the binary data at the cursor.
  template <class T>
  T binary(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T))
      fail_offset(pos_, "the file ends inside binary data (", what, "): ", sizeof(T), " bytes needed, ", remaining(),
                  " left; the file is truncated");
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  /// Checks that `count` binary items of `item_bytes` bytes each are left in the file.
  void check_binary(std::uint64_t count, std::uint64_t item_bytes, const char* what) const;

  /// Throws tessera::Error "<name>, line <l>: <message>" for the line of byte `offset`.
  /// In binary mode (set_binary), it names the byte offset instead.
  template <class... Args>
  [[noreturn]] void fail_line(std::size_t offset, Args&&... args) const {
    if (binary_) fail_offset(offset, std::forward<Args>(args)...);
    fail(name_, ", line ", line_of(offset), ": ", std::forward<Args>(args)...);
  }
  /// From now on, errors name byte offsets rather than lines (binary files).
  void set_binary() { binary_ = true; }
  /// Throws tessera::Error "<name>, line <l>: <message>" at the last token read (in binary
  /// mode: the byte offset).
  template <class... Args>
  [[noreturn]] void fail_token(Args&&... args) const {
    fail_line(tok_, std::forward<Args>(args)...);
  }
  /// Throws tessera::Error "<name>, byte offset <o>: <message>".
  template <class... Args>
  [[noreturn]] void fail_offset(std::size_t offset, Args&&... args) const {
    fail(name_, ", byte offset ", offset, ": ", std::forward<Args>(args)...);
  }

 private:
  std::string_view bytes_;
  std::string name_;
  bool hash_comments_ = false;
  bool binary_ = false;
  std::size_t pos_ = 0, tok_ = 0;
};

/// Printable form of a token for error messages: at most 40 characters, control and
/// non-ASCII bytes written as '?'.
std::string printable(std::string_view s);

/// Hands `message` to `warnings` when given, else prints "tessera: warning: <message>" to
/// std::cerr.
void warn(std::vector<std::string>* warnings, const std::string& message);

/// Runs mesh.validate(name, element_ids, vertex_ids); makes sure that the message of its
/// error names the file.
void validate_mesh(const fem::Mesh& mesh, const std::string& name, std::span<const long long> element_ids = {},
                   std::span<const long long> vertex_ids = {});

/// Reads a whole file into a string; fails naming `path` and `reader` when it cannot be read.
std::string read_file(const std::string& path, const char* reader);

}  // namespace tessera::io::detail
