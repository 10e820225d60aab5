#include "render/plot/export/figure_export.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/enum_names.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/memory.h"
#include "render/plot/export/figure_render.h"
#include "render/plot/export/png.h"

namespace attn::fig {
namespace fs = std::filesystem;

namespace {
constexpr EnumName<ExportFormat> kFormatNames[] = {{ExportFormat::Pdf, "pdf"},
                                                   {ExportFormat::Svg, "svg"},
                                                   {ExportFormat::Png, "png"},
                                                   {ExportFormat::Csv, "csv"}};
}  // namespace

const char* to_string(ExportFormat f) {
  return enum_name(f, kFormatNames);
}

bool parse_export_format(const std::string& s, ExportFormat& out) {
  return find_enum(kFormatNames, s, &out);
}

void validate(const ExportRequest& r) {
  auto range = [](const char* name, double v, double lo, double hi, const char* unit) {
    if (!(v >= lo && v <= hi)) {
      std::ostringstream os;
      os << name << " " << v << " is out of range: allowed " << lo << " to " << hi << " " << unit;
      throw FigureError(os.str());
    }
  };
  if (r.format == ExportFormat::Png) range("dpi", r.dpi, 30, 2400, "dots per inch");
  range("width_in", r.width_in, 1, 20, "inches (3.5 single column, 7 full width)");
  if (r.height_in != 0) range("height_in", r.height_in, 0.5, 20, "inches (or 0: from the figure)");
  range("font_pt", r.font_pt, 4, 24, "points");
  if (r.path.empty()) throw FigureError("no output path given (--out)");
  const fs::path p(r.path);
  std::error_code ec;
  if (fs::is_directory(p, ec))
    throw FigureError("output path " + r.path + " is a directory; give a file name");
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec))
    throw FigureError("output directory " + dir.string() + " does not exist");
}

Page page_for(const Figure& figure, const ExportRequest& r, const TextMetrics& metrics) {
  Page page;
  page.width_pt = r.width_in * 72.0;
  page.height_pt = r.height_in > 0 ? r.height_in * 72.0
                                   : natural_height(figure, page.width_pt, r.font_pt, metrics);
  page.font_pt = r.font_pt;
  page.theme = r.dark ? Theme::dark() : Theme::light();
  return page;
}

namespace {

// digits: 9 reads a float back exactly; 12 keeps doubles built from floats exact too.
std::string number(double v, int digits = 12) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// RFC 4180 quoting when a field holds a comma, quote or newline.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

// The first line of every figure CSV (and how an export recognises its own earlier CSV).
constexpr const char* kCsvHeader =
    "figure,panel,title,series,kind,i,j,x,y,value,step,layer,head,query,key,weight\n";

std::string figure_csv(const Figure& figure) {
  std::ostringstream os;
  os << kCsvHeader;
  const std::string name = field(figure.name);
  for (size_t p = 0; p < figure.panels.size(); ++p) {
    const Panel& panel = figure.panels[p];
    const std::string head = name + "," + std::to_string(p) + "," + field(panel.title) + ",";
    const std::string step = panel.step >= 0    ? std::to_string(panel.step)
                             : figure.step >= 0 ? std::to_string(figure.step)
                                                : "";
    auto points = [&](const std::string& series, const char* kind, const std::vector<double>& x,
                      const std::vector<double>& y) {
      for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
        os << head << field(series) << "," << kind << "," << i << ",," << number(x[i]) << ","
           << number(y[i]) << ",," << step << ",,,,,\n";
    };
    for (const Heatmap& h : panel.heatmaps)
      for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
          const size_t k = static_cast<size_t>(r) * h.cols + c;
          if (k >= h.values.size()) break;
          const std::string value = number(h.values[k], 9);
          const int i = h.first_row + r, j = h.first_col + c;  // in the whole matrix
          os << head << field(h.name) << ",heatmap," << i << "," << j << ",,," << value << ","
             << step << ",";
          if (h.layer >= 0)
            os << h.layer << "," << h.head << "," << i << "," << j << "," << value << "\n";
          else
            os << ",,,,\n";
        }
    for (const Polygon& g : panel.polygons) points(g.name, "polygon", g.x, g.y);
    for (const LineSeries& l : panel.lines) points(l.name, "line", l.x, l.y);
    for (const ScatterSeries& s : panel.scatters) points(s.name, "scatter", s.x, s.y);
  }
  return os.str();
}

std::string encode_png(const std::vector<render::Rgba8>& rgba, int width, int height, int dpi) {
  if (width <= 0 || height <= 0 || rgba.size() < static_cast<size_t>(width) * height)
    throw FigureError("PNG encoder: image size does not match its pixels");
  try {
    return render::encode_png(reinterpret_cast<const uint8_t*>(rgba.data()), width, height, 4, dpi);
  } catch (const Error& e) {
    throw FigureError(e.what());
  }
}

namespace {

// The files a run directory is made of: a side file (CSV, JSON) of an export must never replace
// one of them; only an --out naming it directly may.
bool is_run_file(const fs::path& p) {
  static const char* const kRunFiles[] = {"config.json", "metrics.csv",          "summary.json",
                                          "conn.json",   "mechanism_views.json", "connections.json",
                                          "C.csv"};
  const std::string name = p.filename().string();
  bool named = false;
  for (const char* f : kRunFiles) named = named || name == f;
  std::error_code ec;
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  return named && fs::exists(dir / "config.json", ec) && fs::exists(dir / "metrics.csv", ec);
}

// An existing side file attnlab wrote (an earlier export to the same name, which this one
// replaces): a provenance JSON saying "program": "attnlab", or a CSV starting with the figure
// CSV's header. Anything else there is someone's file, which an export must not replace.
bool is_our_side_file(const fs::path& p) {
  std::string text;
  try {
    text = read_regular_file(p.string(), 64u << 20);
  } catch (const Error&) {
    return false;  // a directory, a FIFO, unreadable: not ours to replace
  }
  if (p.extension() == ".csv") return text.rfind(kCsvHeader, 0) == 0;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("program", std::string()) == "attnlab" && j.contains("figure");
}

// Before anything is written: the outputs are distinct, and side files leave run files and
// files attnlab did not write alone.
void check_outputs(const std::vector<std::pair<std::string, std::string>>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path p = fs::absolute(files[i].first).lexically_normal();
    for (size_t k = 0; k < i; ++k)
      if (fs::absolute(files[k].first).lexically_normal() == p)
        throw FigureError("--out " + files[0].first + ": its side file " + files[i].first +
                          " would overwrite it; give --out the extension of its format");
    if (i > 0 && is_run_file(p))
      throw FigureError("the side file " + files[i].first + " would replace that run's own " +
                        p.filename().string() + "; write the figure elsewhere (e.g. into " +
                        (p.parent_path() / "figures").string() + "/)");
    std::error_code ec;
    if (i > 0 && fs::exists(fs::symlink_status(p, ec)) && !is_our_side_file(p))
      throw FigureError("the side file " + files[i].first +
                        " exists and attnlab did not write it (it is not an earlier export's); "
                        "move it, or write the figure under another name");
  }
}

}  // namespace

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  try {
    write_files_atomic(files);
  } catch (const Error& e) {
    throw FigureError(e.what());
  }
}

ExportResult export_figure(const Figure& figure, const ExportRequest& request,
                           const Provenance& provenance) {
  validate(request);
  if (figure.panels.empty()) throw FigureError("figure " + figure.name + " has nothing to draw");
  const std::string font_file = request.font_file.empty() ? default_font_path() : request.font_file;
  const auto font = FigureFont::load(font_file);
  const Page page = page_for(figure, request, *font);
  if (request.format == ExportFormat::Png) {
    // The raster (cairo's surface and our copy) and its PNG: about 12 bytes a pixel at peak.
    const double px_w = std::ceil(page.width_pt / 72.0 * request.dpi);
    const double px_h = std::ceil(page.height_pt / 72.0 * request.dpi);
    // cairo's image surfaces stop at 32767 px a side; 2^28 px is a 16384 x 16384 picture.
    if (px_w > 32767 || px_h > 32767 || px_w * px_h > double(1 << 28))
      throw FigureError("a " + std::to_string(int64_t(px_w)) + " x " +
                        std::to_string(int64_t(px_h)) +
                        " px PNG is past attnlab's limit (32767 px a side, 268 Mpx): lower --dpi "
                        "or --width-in, or export PDF or SVG");
    try {
      require_memory(
          static_cast<uint64_t>(px_w * px_h * 12),
          "a " + std::to_string(int64_t(px_w)) + " x " + std::to_string(int64_t(px_h)) + " px PNG",
          "lower --dpi or --width-in, or export PDF or SVG");
    } catch (const Error& e) {
      throw FigureError(e.what());
    }
  }

  std::vector<std::pair<std::string, std::string>> files;
  switch (request.format) {
    case ExportFormat::Pdf:
      files.emplace_back(request.path, render_pdf(figure, page, *font));
      break;
    case ExportFormat::Png:
      files.emplace_back(request.path, render_png(figure, page, *font, request.dpi));
      break;
    case ExportFormat::Svg:
      files.emplace_back(request.path, render_svg(figure, page, *font));
      break;
    case ExportFormat::Csv:
      files.emplace_back(request.path, figure_csv(figure));
      break;
  }
  if (request.sidecars) {
    fs::path stem(request.path);
    stem.replace_extension();
    if (request.format != ExportFormat::Csv)
      files.emplace_back(stem.string() + ".csv", figure_csv(figure));
    nlohmann::json j = {{"program", "attnlab"},
                        {"version", provenance.program_version},
                        {"figure", figure.name},
                        {"file", fs::path(request.path).filename().string()},
                        {"format", to_string(request.format)},
                        {"run_id", provenance.run_id},
                        {"config_hash", provenance.config_hash},
                        {"seed", provenance.seed},
                        {"step", provenance.step},
                        {"mechanism", provenance.mechanism},
                        {"date", provenance.date.empty() ? now_utc() : provenance.date},
                        {"width_in", page.width_pt / 72.0},
                        {"height_in", page.height_pt / 72.0},
                        {"font_pt", request.font_pt},
                        {"font", {{"family", font->family()}, {"file", font->path()}}},
                        {"theme", request.dark ? "dark" : "light"}};
    if (request.format == ExportFormat::Png) j["dpi"] = request.dpi;
    files.emplace_back(stem.string() + ".json", j.dump(2) + "\n");
  }
  check_outputs(files);
  write_files_atomically(files);
  ExportResult result;
  for (const auto& f : files) result.files.push_back(f.first);
  result.font_family = font->family();
  result.font_file = font->path();
  return result;
}

}  // namespace attn::fig
