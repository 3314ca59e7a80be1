// The tuning cache (JSON, read once per process).
#include "tessera/core/tuning.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"

namespace tessera::tuning {

namespace {

using json = nlohmann::json;

std::mutex cache_mutex;
bool cache_loaded = false;
json cache_doc;

json read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json::object();
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    json doc = json::parse(ss.str());
    if (!doc.is_object() || doc.value("format", "") != "tessera-tuning-1" || !doc.contains("devices") ||
        !doc["devices"].is_object())
      throw std::runtime_error("not a tessera tuning cache (expected {\"format\": \"tessera-tuning-1\", \"devices\": {...}})");
    return doc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: ignoring the tuning cache %s: %s\n", path.c_str(), e.what());
    return json::object();
  }
}

const json& loaded() {
  if (!cache_loaded) {
    const std::string path = cache_path();
    cache_doc = path.empty() ? json::object() : read_file(path);
    cache_loaded = true;
  }
  return cache_doc;
}

}  // namespace

std::string cache_path() {
  if (const char* p = std::getenv("TESSERA_TUNING_CACHE")) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessera/tuning.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessera/tuning.json";
  return "";
}

std::string device_key(const Exec& exec) {
  switch (exec.backend) {
    case Backend::Cuda: return current_device().name;
    case Backend::OpenMP: return "cpu-openmp-" + std::to_string(openmp_threads());
    case Backend::Serial: return "cpu-serial";
  }
  return "unknown";
}

std::optional<Entry> lookup(const std::string& device, const std::string& key) {
  std::lock_guard<std::mutex> lock(cache_mutex);
  const json& doc = loaded();
  if (!doc.contains("devices")) return std::nullopt;
  const json& devs = doc["devices"];
  auto d = devs.find(device);
  if (d == devs.end() || !d->is_object()) return std::nullopt;
  auto k = d->find(key);
  if (k == d->end() || !k->is_object()) return std::nullopt;
  Entry e;
  e.elements_per_block = k->value("elements_per_block", 0);
  e.time_ms = k->value("time_ms", 0.0);
  e.date = k->value("date", "");
  e.elements_per_item = k->value("elements_per_item", 0);
  if (e.elements_per_block < 1 || e.elements_per_item < 0) return std::nullopt;
  return e;
}

void store(const std::string& device, const std::map<std::string, Entry>& entries, const std::string& path_in) {
  const std::string path = path_in.empty() ? cache_path() : path_in;
  TESSERA_REQUIRE(!path.empty(), "tuning cache: no file to write (TESSERA_TUNING_CACHE is empty and no path was given)");
  std::lock_guard<std::mutex> lock(cache_mutex);
  json doc = read_file(path);
  if (!doc.contains("devices")) doc = json{{"format", "tessera-tuning-1"}, {"devices", json::object()}};
  json& dev = doc["devices"][device];
  if (!dev.is_object()) dev = json::object();
  for (const auto& [key, e] : entries) {
    dev[key] = json{{"elements_per_block", e.elements_per_block}, {"time_ms", e.time_ms}, {"date", e.date}};
    if (e.elements_per_item > 0) dev[key]["elements_per_item"] = e.elements_per_item;
  }
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    TESSERA_REQUIRE(out.good(), "tuning cache: cannot write ", tmp);
    out << doc.dump(1) << "\n";
    TESSERA_REQUIRE(out.good(), "tuning cache: write to ", tmp, " failed");
  }
  std::filesystem::rename(tmp, p, ec);
  TESSERA_REQUIRE(!ec, "tuning cache: cannot replace ", path, ": ", ec.message());
  cache_loaded = false;  // reread on the next lookup
}

void reload() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  cache_loaded = false;
}

}  // namespace tessera::tuning
