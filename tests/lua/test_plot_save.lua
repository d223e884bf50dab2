-- test_plot_save.lua - p:save: every plot object gwb makes saved as SVG and PNG at a requested
-- size. The PNG files are decoded by tests/lua/png_check.py (chunks, CRCs, IHDR size, the IDAT
-- inflated to its exact size, pixels that are not background); the SVG files parse as XML
-- (python3's xml.etree, else xmllint) and render with rsvg-convert to a PNG of the requested
-- size that is not blank. What a machine lacks (python3, rsvg-convert) is skipped with the
-- reason. Then gwb.plot_dir, XML escaping, and the errors: bad names, sizes, unwritable places.
local python = os.getenv("GWB_PYTHON") or "python3"
local here = (T.current_file or "tests/lua/x"):match("^(.*)/[^/]*$") or "tests/lua"
local dir = T.tmpdir()

local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end
local function have(cmd) return (run("command -v " .. cmd .. " >/dev/null")) end

local HAVE_PY = have(python) and (run(python .. " -c 'import zlib, xml.etree.ElementTree'"))
local HAVE_XMLLINT = have("xmllint")
local HAVE_RSVG = have("rsvg-convert")

-- "ok W H INK COLOURS" from png_check.py, as numbers
local function png_info(path)
  local ok, out = run(string.format("%s %s %s", python, sh(here .. "/png_check.py"), sh(path)))
  T.ok(ok, path .. ": png_check: " .. out)
  local w, h, ink, colours = out:match("^ok (%d+) (%d+) (%d+) (%d+)")
  T.ok(w, path .. ": " .. out)
  return tonumber(w), tonumber(h), tonumber(ink), tonumber(colours)
end

local function check_png(path, w, h)
  if not HAVE_PY then return end
  local pw, ph, ink, colours = png_info(path)
  T.eq(pw, w, path .. " width")
  T.eq(ph, h, path .. " height")
  T.ok(ink > w * h / 200, path .. ": nearly blank (" .. ink .. " pixels of ink)")
  T.ok(colours >= 2, path .. ": one colour only")
end

local function check_svg(path, w, h)
  local text = T.readfile(path)
  T.ok(text:find("<svg", 1, true), path .. ": no <svg> element")
  T.ok(text:find(string.format('width="%d" height="%d"', w, h), 1, true), path .. ": size not declared")
  if HAVE_PY then
    local ok, out = run(string.format("%s -c %s %s", python,
      sh("import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
        .. "print(r.tag, r.get('width'), r.get('height'))"), sh(path)))
    T.ok(ok, path .. " does not parse as XML: " .. out)
    T.ok(out:find(string.format("svg %d %d", w, h), 1, true), path .. ": " .. out)
  elseif HAVE_XMLLINT then
    local ok, out = run("xmllint --noout " .. sh(path))
    T.ok(ok, path .. " does not parse as XML: " .. out)
  end
  if HAVE_RSVG and HAVE_PY then
    local png = path .. ".rsvg.png"
    local ok, out = run(string.format("rsvg-convert -o %s %s", sh(png), sh(path)))
    T.ok(ok, "rsvg-convert " .. path .. ": " .. out)
    local pw, ph, ink = png_info(png)
    T.eq(pw, w, path .. " rendered width")
    T.eq(ph, h, path .. " rendered height")
    T.ok(ink > w * h / 200, path .. ": renders nearly blank (" .. ink .. " pixels)")
  end
end

local saved = 0
-- save plot-like object p as name.svg and name.png at w x h and check both
local function both(p, name, w, h)
  local o = w and { width = w, height = h } or nil
  w, h = w or 640, h or 480
  local svg, png = dir .. "/" .. name .. ".svg", dir .. "/" .. name .. ".png"
  T.eq(select("#", p:save(svg, o)), 0, "save returns nothing")
  p:save(png, o)
  check_svg(svg, w, h)
  check_png(png, w, h)
  saved = saved + 1
end

local function need_tools()
  if not HAVE_PY then T.skip("python3 with zlib is not installed: the PNG decoder and XML parse need it") end
  if not HAVE_RSVG then T.skip("rsvg-convert is not installed (librsvg2-bin; scripts/install-deps)") end
end

local iris = data.load("datasets/iris.csv", { target = "species" })

T.test("plot.bar, line, hist, scatter, box save as SVG and PNG of the requested size", function()
  need_tools()
  both(plot.bar({ cpu = 3.5, gpu = 12, disk = 0.4 }, { title = "bandwidth", unit = " GB/s" }), "bar", 400, 300)
  both(plot.line({ { 1, 10, 100, 1000 }, { 5, 4, 3, 2 } }, { log = true, title = "two series" }), "line")
  local v = {}
  for i = 1, 500 do v[i] = math.sin(i) * i % 7 end
  both(plot.hist(v, { bins = 12, title = "hist" }), "hist", 800, 600)
  both(plot.scatter({ 1, 2, 3, 4 }, { 4, 1, 3, 2 }, { groups = { "a", "b", "a", "b" } }), "scatter", 320, 240)
  both(plot.box({ { "a", { 1, 2, 3, 4, 50 } }, { "b", { 2, 3, 4 } } }), "box", 500, 500)
end)

T.test("d:scatter, d:hist, d:box and c:hist save; scatter colours by category", function()
  need_tools()
  local p = iris:scatter("petal_length", "petal_width", { color = "species" })
  T.eq(#p.model.legend, 3)
  T.eq(p.model.legend[1].label, "setosa")
  T.ok(p.model.items[1].colors[1] ~= p.model.items[1].colors[150], "setosa and virginica share a colour")
  both(p, "d_scatter", 640, 480)
  local _, _, _, colours = png_info(dir .. "/d_scatter.png")
  T.ok(colours >= 5, "three category colours plus axes and text: " .. colours)
  both(iris:hist("sepal_length", { bins = 10 }), "d_hist")
  local b = iris:box("petal_length", { by = "species" })
  T.eq(#b.stats, 3)
  T.eq(b.stats[1].label, "setosa")
  T.near(b.stats[1].median, 1.5, 1e-9)   -- numpy: np.median of setosa's petal_length
  both(b, "d_box", 600, 400)
  both(iris.sepal_width:hist(), "c_hist")
  T.raises(function() iris:hist("species") end, "category column")
  T.raises(function() iris:scatter("species", "petal_width") end, "category column")
  T.raises(function() iris:scatter("petal_lenght", "petal_width") end, "petal_length")
end)

T.test("f:plot_importance, e:plot_convergence, e:plot_spectrum save", function()
  need_tools()
  local f = rf.train(iris, { trees = 8, seed = 1, progress = false })
  both(f:plot_importance(), "importance", 640, 360)
  local e = eig.solve(mat.laplacian1d(40), { k = 4 })
  both(e:plot_convergence(), "convergence")
  local full = eig.solve(mat.spectral({ -2, 0.001, 0.1, 1, 10, 100 }, { seed = 3 }))
  local s = full:plot_spectrum({ log = true })
  T.ok(s.model.ylog, "log scale asked for")
  T.eq(#s.model.items[1].x, 6)
  both(s, "spectrum")
  both(full:plot_spectrum(), "spectrum_linear", 300, 200)
end)

T.test("metrics: confusion heatmap, ROC and PR curves save", function()
  need_tools()
  local c = metrics.confusion({ "a", "b", "a", "c", "b" }, { "a", "b", "b", "c", "b" })
  local p = c:plot()
  T.eq(p.model.items[2].texts[1], "1", "the counts are written in the cells")
  T.eq(p.model.ytick_labels[3], "c")
  both(p, "confusion")
  c:save(dir .. "/confusion2.png", { width = 300, height = 300 })
  check_png(dir .. "/confusion2.png", 300, 300)
  local truth, score = {}, {}
  for i = 1, 60 do truth[i] = i % 3 == 0 and 1 or 0; score[i] = (i % 3 == 0 and 0.3 or 0) + (i % 7) / 10 end
  local roc = metrics.roc_curve(truth, score)
  both(roc, "roc")
  both(roc:plot(), "roc_plot", 400, 400)
  both(metrics.pr_curve(truth, score), "pr")
  local f = rf.train(iris, { trees = 8, seed = 1, progress = false })
  both(f:evaluate(iris).confusion, "evaluate_confusion")
end)

T.test("lessons save their charts; a lesson without one says so", function()
  need_tools()
  local l = teach.occupancy()
  T.ok(#l.plots >= 1)
  both(l, "lesson_occupancy")
  local t = teach.transpose({ rows = 256, reps = 1, gpu = false })
  both(t, "lesson_transpose", 500, 300)
  T.raises(function() t:save(dir .. "/x.svg", { which = 9 }) end, "which must be 1 to")
  local lay = teach.layout()
  T.raises(function() lay:save(dir .. "/x.svg") end, "draws no chart")
end)

T.test("every plot method was exercised", function()
  need_tools()
  T.eq(saved, 20, "saves that ran to the end (every test above, each plot kind)")
end)

T.test("escaping: labels with XML specials and invalid UTF-8 still make valid SVG", function()
  local p = plot.bar({ { "<a & 'b'>", 1 }, { "caf\xe9 \"x\"", 2 }, { "µs ✓", 3 } }, { title = "</svg> & <!-- " })
  local path = dir .. "/escape.svg"
  p:save(path)
  local text = T.readfile(path)
  T.ok(text:find("&lt;a &amp; &apos;b&apos;&gt;", 1, true), "escaped label")
  T.ok(text:find("&lt;/svg&gt; &amp; &lt;!--", 1, true), "escaped title")
  T.ok(utf8.len(text), "the SVG is valid UTF-8 (the invalid byte replaced)")
  T.ok(text:find("µs ✓", 1, true), "UTF-8 kept")
  if HAVE_PY or HAVE_XMLLINT then check_svg(path, 640, 480) else T.skip("neither python3 nor xmllint to parse XML") end
end)

T.test("gwb.plot_dir holds relative names; absolute ones are left alone", function()
  local sub = dir .. "/plotdir"
  os.execute("mkdir -p " .. sh(sub))
  local old = gwb.plot_dir
  gwb.plot_dir = sub
  local ok, err = pcall(function()
    plot.line({ 1, 2, 3 }):save("rel.svg")
    plot.line({ 1, 2, 3 }):save(dir .. "/abs.svg")
  end)
  gwb.plot_dir = old
  T.ok(ok, tostring(err))
  T.ok(T.readfile(sub .. "/rel.svg"):find("<svg", 1, true), "relative name under gwb.plot_dir")
  T.ok(T.readfile(dir .. "/abs.svg"):find("<svg", 1, true), "absolute name as given")
  gwb.plot_dir = 42
  local e = T.raises(function() plot.line({ 1, 2 }):save("x.svg") end, "gwb.plot_dir")
  gwb.plot_dir = old
  T.ok(e:find("string", 1, true), e)
end)

T.test("errors: the name, the size, an unwritable place (path and errno's text)", function()
  local p = plot.line({ 1, 2, 3 })
  T.raises(function() p:save(dir .. "/x.jpg") end, "must end in .svg or .png")
  T.raises(function() p:save(dir .. "/x.png", { width = 8, height = 100 }) end, "16 to 10000")
  T.raises(function() p:save(dir .. "/x.png", { width = 100.5 }) end, "whole number")
  T.raises(function() p:save(dir .. "/x.png", { widht = 100 }) end, "unknown option 'widht'")
  T.raises(function() p:save() end, "give a file name")
  local e = T.raises(function() p:save("/nonexistent-gwb-dir/sub/x.png") end, "/nonexistent-gwb-dir/sub/x.png")
  T.ok(e:find("No such file or directory", 1, true), e)
  e = T.raises(function() p:save("/proc/gwb-plot.svg") end, "/proc/gwb-plot.svg")
  T.ok(e:find("plot save", 1, true), e)
  local f = io.open(dir .. "/x.png", "rb")
  if f then f:close() end
  T.ok(not f, "nothing left behind by the failed saves")
end)
