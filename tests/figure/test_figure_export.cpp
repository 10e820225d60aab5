// The file backends against the tools a reviewer uses: pdffonts, pdftoppm, xmllint, and the PNG
// and CSV bytes themselves.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>

#include "figure_helpers.h"
#include "render/plot/export/figure_export.h"
#include "render/plot/export/figure_render.h"

namespace fs = std::filesystem;
using namespace attn::fig;
using namespace attn::fig::testing;

namespace {

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

// PNG chunks by type (the first of each).
std::map<std::string, std::string> png_chunks(const std::string& png) {
  std::map<std::string, std::string> chunks;
  REQUIRE(png.size() > 8);
  REQUIRE(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = be32(png, at);
    const std::string type = png.substr(at + 4, 4);
    if (!chunks.count(type)) chunks[type] = png.substr(at + 8, len);
    at += 12 + len;
  }
  return chunks;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        cells.push_back(cell), cell.clear();
      else
        cell += c;
    }
    cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

bool have_tool(const char* tool) {
  int status = 0;
  run(std::string("command -v ") + tool + " >/dev/null 2>&1", status);
  return status == 0;
}

}  // namespace

TEST_CASE("figure export: the PDF embeds its TrueType font (no Type 3) and renders") {
  REQUIRE_MESSAGE(have_tool("pdffonts"), "poppler-utils is needed (scripts/setup.sh --tests)");
  const auto dir = fresh_dir("pdf");
  ExportRequest req;
  req.format = ExportFormat::Pdf;
  req.path = (dir / "sample.pdf").string();
  req.width_in = 7.0;
  const ExportResult res =
      export_figure(sample_figure(), req, {"0.1", "run1", "abc", 7, 120, "dot", ""});
  CHECK(res.font_family == "DejaVu Sans");
  CHECK(fs::exists(dir / "sample.pdf"));
  CHECK(fs::exists(dir / "sample.csv"));
  CHECK(fs::exists(dir / "sample.json"));

  int status = 0;
  const std::string fonts = run("pdffonts " + req.path, status);
  REQUIRE(status == 0);
  // Header, dashes, then one line per font: name type encoding emb sub uni object ID.
  std::istringstream lines(fonts);
  std::string line;
  int font_lines = 0;
  std::getline(lines, line), std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++font_lines;
    INFO(line);
    CHECK(line.find("DejaVuSans") != std::string::npos);
    CHECK(line.find("Type 3") == std::string::npos);
    CHECK((line.find("TrueType") != std::string::npos || line.find("CID") != std::string::npos));
    // emb and sub columns: "yes yes".
    CHECK(line.find("yes yes") != std::string::npos);
  }
  CHECK(font_lines >= 1);

  // pdftoppm renders it, at the page size asked for (7 in x 0.75 aspect at 50 dpi).
  run("pdftoppm -r 50 -png -singlefile " + req.path + " " + (dir / "page").string(), status);
  REQUIRE(status == 0);
  const auto chunks = png_chunks(read_file((dir / "page.png").string()));
  CHECK(be32(chunks.at("IHDR"), 0) == 350);
  CHECK(std::abs(int(be32(chunks.at("IHDR"), 4)) - 263) <= 1);

  // The sidecar says where the figure came from.
  const std::string json = read_file((dir / "sample.json").string());
  for (const char* key : {"\"run_id\": \"run1\"", "\"config_hash\": \"abc\"", "\"seed\": 7",
                          "\"step\": 120", "\"mechanism\": \"dot\"", "\"family\": \"DejaVu Sans\"",
                          "\"date\": \"20", "\"version\": \"0.1\""})
    CHECK_MESSAGE(json.find(key) != std::string::npos, key);
}

TEST_CASE("figure export: the SVG parses, keeps text as <text> and heatmaps as crisp images") {
  REQUIRE_MESSAGE(have_tool("xmllint"), "libxml2-utils is needed (scripts/setup.sh --tests)");
  const auto dir = fresh_dir("svg");
  ExportRequest req;
  req.format = ExportFormat::Svg;
  req.path = (dir / "sample.svg").string();
  export_figure(sample_figure(), req, {});
  int status = 0;
  run("xmllint --noout " + req.path + " 2>&1", status);
  CHECK(status == 0);
  const std::string svg = read_file(req.path);
  CHECK(svg.find("<text") != std::string::npos);
  CHECK(svg.find(">loss (nats)</text>") != std::string::npos);
  CHECK(svg.find(">Sample figure</text>") != std::string::npos);
  CHECK(svg.find("font-family=\"DejaVu Sans\"") != std::string::npos);
  CHECK(svg.find("<image") != std::string::npos);
  CHECK(svg.find("image-rendering=\"pixelated\"") != std::string::npos);
  CHECK(svg.find("width=\"252pt\"") != std::string::npos);  // 3.5 in
  // Each heatmap image carries xlink:href (declared on <svg>) beside SVG 2's href, so ImageMagick
  // and older viewers, which read only xlink:href, draw it.
  CHECK(svg.find("xmlns:xlink=\"http://www.w3.org/1999/xlink\"") != std::string::npos);
  const size_t image = svg.find("<image");
  REQUIRE(image != std::string::npos);
  const std::string tag = svg.substr(image, svg.find("/>", image) - image);
  CHECK(tag.find(" xlink:href=\"data:image/png;base64,") != std::string::npos);
  CHECK(tag.find(" href=\"data:image/png;base64,") != std::string::npos);
}

TEST_CASE("figure export: the PNG has the requested size and records its dpi in pHYs") {
  const auto dir = fresh_dir("png");
  for (int dpi : {300, 600}) {
    ExportRequest req;
    req.format = ExportFormat::Png;
    req.dpi = dpi;
    req.width_in = 3.5;
    req.height_in = 2.0;
    req.path = (dir / ("sample" + std::to_string(dpi) + ".png")).string();
    export_figure(sample_figure(), req, {});
    const auto chunks = png_chunks(read_file(req.path));
    CHECK(be32(chunks.at("IHDR"), 0) == uint32_t(std::lround(3.5 * dpi)));
    CHECK(be32(chunks.at("IHDR"), 4) == uint32_t(2 * dpi));
    REQUIRE(chunks.count("pHYs"));
    const std::string& phys = chunks.at("pHYs");
    CHECK(be32(phys, 0) == uint32_t(std::lround(dpi / 0.0254)));
    CHECK(be32(phys, 4) == uint32_t(std::lround(dpi / 0.0254)));
    CHECK(phys[8] == 1);  // unit: metre
  }
}

TEST_CASE("figure export: the CSV holds exactly the figure's values") {
  const auto dir = fresh_dir("csv");
  const Figure f = sample_figure();
  ExportRequest req;
  req.format = ExportFormat::Csv;
  req.path = (dir / "sample.csv").string();
  export_figure(f, req, {});
  const auto rows = parse_csv(read_file(req.path));
  REQUIRE(rows.size() > 1);
  CHECK(rows[0] == std::vector<std::string>{"figure", "panel", "title", "series", "kind", "i", "j",
                                            "x", "y", "value", "step", "layer", "head", "query",
                                            "key", "weight"});
  size_t heat = 0, line = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& c = rows[r];
    REQUIRE(c.size() == 16);
    // No step and no attention map in this figure: the new columns stay empty.
    for (size_t k = 10; k < 16; ++k) CHECK(c[k].empty());
    if (c[4] == "heatmap") {
      const int i = std::stoi(c[5]), j = std::stoi(c[6]);
      CHECK(std::stof(c[9]) == f.panels[1].heatmaps[0].values[i * 4 + j]);
      ++heat;
    } else if (c[4] == "line") {
      const auto& series = c[3] == "train" ? f.panels[0].lines[0] : f.panels[0].lines[1];
      const size_t i = std::stoul(c[5]);
      CHECK(std::stod(c[7]) == doctest::Approx(series.x[i]).epsilon(1e-11));
      CHECK(std::stod(c[8]) == doctest::Approx(series.y[i]).epsilon(1e-11));
      ++line;
    }
  }
  CHECK(heat == 12);
  CHECK(line == 102);

  // A figure of one step whose heatmap is an attention map (layer 1, head 2), and a panel of
  // another step (a filmstrip's): step, layer, head, query, key and weight name every cell.
  Figure a = sample_figure();
  a.step = 40;
  a.panels[1].heatmaps[0].layer = 1;
  a.panels[1].heatmaps[0].head = 2;
  a.panels[0].step = 7;
  req.path = (dir / "attention.csv").string();
  export_figure(a, req, {});
  const auto cells = parse_csv(read_file(req.path));
  size_t named = 0;
  for (size_t r = 1; r < cells.size(); ++r) {
    const auto& c = cells[r];
    REQUIRE(c.size() == 16);
    CHECK(c[10] == (c[1] == "0" ? "7" : "40"));
    if (c[4] != "heatmap") continue;
    CHECK(c[11] == "1");
    CHECK(c[12] == "2");
    CHECK(c[13] == c[5]);  // query = row
    CHECK(c[14] == c[6]);  // key = column
    CHECK(c[15] == c[9]);  // weight = value
    ++named;
  }
  CHECK(named == 12);
}

TEST_CASE("figure export: heatmap cells are crisp and oriented (row 0 at the top of a matrix)") {
  auto font = FigureFont::load(default_font_path());
  Figure f;
  f.name = "cells";
  Panel p;
  p.y.inverted = true;
  p.x.visible = p.y.visible = false;
  Heatmap h;
  h.rows = 2, h.cols = 2;
  h.values = {0.0f, 1.0f, 2.0f, 3.0f};
  h.x1 = 2, h.y1 = 2;
  h.colorbar = false;
  p.heatmaps = {h};
  f.panels = {p};
  Page page;
  page.width_pt = page.height_pt = 144;
  int w = 0, hgt = 0;
  const auto px = render_rgba(f, page, *font, 72, w, hgt);
  const FigureLayout layout = layout_figure(f, page, *font);
  const Rect plot = layout.panels[0].plot;
  double vmin, vmax;
  const auto colours = heatmap_pixels(h, vmin, vmax);
  CHECK(vmin == 0.0);
  CHECK(vmax == 3.0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      // Centre of cell (r, c), and a point one pixel inside its corner: the same colour (no
      // smoothing between cells).
      const int cx = int(plot.x + (c + 0.5) * plot.w / 2),
                cy = int(plot.y + (r + 0.5) * plot.h / 2);
      const int ex = int(plot.x + c * plot.w / 2) + 2, ey = int(plot.y + r * plot.h / 2) + 2;
      const auto a = px[size_t(cy) * w + cx], b = px[size_t(ey) * w + ex];
      const auto want = colours[r * 2 + c];
      INFO("cell " << r << "," << c);
      CHECK(int(a.r) == int(want.r));
      CHECK(int(a.g) == int(want.g));
      CHECK(int(a.b) == int(want.b));
      CHECK(int(b.r) == int(want.r));
      CHECK(int(b.b) == int(want.b));
    }
}

TEST_CASE("figure export: bad requests name the culprit and leave no file behind") {
  const auto dir = fresh_dir("bad");
  const Figure f = sample_figure();
  auto message = [&](ExportRequest req) {
    try {
      export_figure(f, req, {});
    } catch (const FigureError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ExportRequest base;
  base.format = ExportFormat::Png;
  base.path = (dir / "out.png").string();

  ExportRequest dpi0 = base;
  dpi0.dpi = 0;
  CHECK(message(dpi0).find("dpi 0 is out of range: allowed 30 to 2400") != std::string::npos);
  ExportRequest wide = base;
  wide.width_in = 40;
  CHECK(message(wide).find("width_in 40") != std::string::npos);
  ExportRequest tiny = base;
  tiny.font_pt = 1;
  CHECK(message(tiny).find("font_pt 1") != std::string::npos);
  ExportRequest missing_dir = base;
  missing_dir.path = (dir / "no" / "such" / "out.png").string();
  CHECK(message(missing_dir).find("does not exist") != std::string::npos);
  ExportRequest is_dir = base;
  is_dir.path = dir.string();
  CHECK(message(is_dir).find("is a directory") != std::string::npos);
  ExportRequest bad_font = base;
  bad_font.font_file = (dir / "nofont.ttf").string();
  CHECK(message(bad_font).find("nofont.ttf cannot be read") != std::string::npos);
  // A sidecar that cannot be written (its name is taken by a directory) fails the whole export:
  // the PNG that was written first is not left behind.
  fs::create_directories(dir / "out.json");
  CHECK(message(base).find("out.json") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.png"));
  CHECK_FALSE(fs::exists(dir / "out.csv"));
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    INFO(e.path().string());
    CHECK(e.path().filename() == "out.json");
    ++entries;
  }
  CHECK(entries == 1);
}
