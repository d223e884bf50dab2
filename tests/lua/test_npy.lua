-- test_npy.lua - NumPy .npy files: data.load / d:save, mat.read / A:save; versions 1.0-3.0,
-- f4/f8, C and Fortran order, made by hand here (and by numpy when it is importable); every
-- other kind refused with a clear message.
local dir = T.tmpdir()

-- A .npy file written byte by byte: version major.minor, header dict text, data bytes.
local function npy(path, major, dict, data)
  local hdr = dict
  local pre = major == 1 and 10 or 12
  local total = math.ceil((pre + #hdr + 1) / 64) * 64
  hdr = hdr .. string.rep(" ", total - pre - #hdr - 1) .. "\n"
  local len = major == 1 and string.pack("<I2", #hdr) or string.pack("<I4", #hdr)
  local f = assert(io.open(path, "wb"))
  f:write("\147NUMPY", string.char(major, 0), len, hdr, data)
  f:close()
  return path
end

local function pack(fmt, vals)
  local t = {}
  for i, v in ipairs(vals) do t[i] = string.pack(fmt, v) end
  return table.concat(t)
end

T.test("npy: a hand-made 1.0 C-order f8 array as a Dataset (last column the target)", function()
  -- 4 rows x 3 columns: two features and a class 0/1
  local p = npy(dir .. "/a.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }",
    pack("<d", { 1.5, 2, 0, 3.25, 4, 1, 5, 6, 0, 7, 8.5, 1 }))
  local d = data.load(p)
  T.eq(d.rows, 4)
  T.eq(d.features, 2)
  T.eq(d.task, "classification")
  T.eq(d.target, "col3")
  T.eq(d.names[1], "col1")
  local c1 = d:column(1)
  T.eq(c1[1], 1.5); T.eq(c1[2], 3.25); T.eq(c1[4], 7.0)
  T.eq(d:column(2)[4], 8.5)
  T.eq(d.labels[1], "0"); T.eq(d.labels[2], "1")
  T.eq(d.source.path, p)
  -- target by index
  local d2 = data.load(p, { target = 1, task = "regression" })
  T.eq(d2.task, "regression")
  T.eq(d2.names[1], "col2")
end)

T.test("npy: Fortran order and f4, versions 2.0 and 3.0, as matrices", function()
  -- 2 x 3, Fortran order: column-major data 1 4 | 2 5 | 3 6
  local p = npy(dir .. "/f.npy", 2, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
    pack("<f", { 1, 4, 2, 5, 3, 6 }))
  local A = mat.read(p)
  T.eq(A.rows, 2); T.eq(A.cols, 3); T.eq(A.dtype, "f32"); T.eq(A.layout, "col")
  T.eq(A:get(1, 2), 2.0); T.eq(A:get(2, 1), 4.0); T.eq(A:get(2, 3), 6.0)
  local q = npy(dir .. "/v3.npy", 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
    pack("<d", { 1, 2, 3, 4 }))
  local B = mat.read(q)
  T.eq(B.dtype, "f64"); T.eq(B:get(2, 1), 3.0)
end)

T.test("npy: round trips d:save -> data.load and A:save -> mat.read keep every value", function()
  local d = data.load("datasets/iris.csv", { target = "species", progress = false })
  local p = dir .. "/iris.npy"
  d:save(p)
  local e = data.load(p)
  T.eq(e.rows, 150); T.eq(e.features, 4); T.eq(e.task, "classification")
  for j = 1, 4 do
    local a, b = d:column(j), e:column(j)
    for i = 1, 150 do T.eq(a[i], b[i]) end
  end
  T.eq(#e.labels, 3)  -- class codes 0, 1, 2 (the names are not numbers)
  for _, dt in ipairs { "f64", "f32" } do
    local A = mat.randn(5, 3, { dtype = dt, seed = 2 })
    for _, lay in ipairs { "row", "col" } do
      local M = mat.zeros(5, 3, { dtype = dt, layout = lay })
      for i = 1, 5 do for j = 1, 3 do M:set(i, j, A:get(i, j)) end end
      local q = dir .. "/m_" .. dt .. lay .. ".npy"
      M:save(q)
      local B = mat.read(q)
      T.eq(B.dtype, dt); T.eq(B.layout, lay)
      for i = 1, 5 do for j = 1, 3 do T.eq(B:get(i, j), A:get(i, j)) end end
    end
  end
end)

T.test("npy: other kinds are refused, saying what the file holds", function()
  local function refuse(name, major, dict, bytes, want)
    local p = npy(dir .. "/" .. name, major, dict, bytes)
    T.raises(function() data.load(p) end, want, name .. " (data.load)")
    T.raises(function() mat.read(p) end, want, name .. " (mat.read)")
  end
  refuse("be.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", string.rep("\0", 32), "big-endian")
  refuse("i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", string.rep("\0", 32), "dtype '<i8' is not supported")
  refuse("obj.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }", "", "object array")
  refuse("one.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", string.rep("\0", 32), "a 1-D array")
  refuse("three.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2), }", string.rep("\0", 64), "a 3-D array")
  refuse("short.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }", string.rep("\0", 40), "truncated")
  refuse("rec.npy", 1, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2, 2), }", "", "structured")
  refuse("v9.npy", 9, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", string.rep("\0", 8), "version 9.0")
  local f = assert(io.open(dir .. "/bad.npy", "wb")); f:write("not numpy at all"); f:close()
  T.raises(function() mat.read(dir .. "/bad.npy") end, "")
  T.raises(function() data.load(dir .. "/bad.npy") end, "not a .npy file")
  -- a version-2 header length the file cannot hold (64 KiB claimed, 16 bytes there) is refused
  -- before anything that size is allocated; one over the 1 MiB limit too
  for _, len in ipairs({ { 0, 0, 1, 0, "truncated: a header of 65536 bytes" },
                         { 0, 0, 32, 0, "header of 2097152 bytes" } }) do
    local g = assert(io.open(dir .. "/hlen.npy", "wb"))
    g:write("\147NUMPY\2\0", string.char(len[1], len[2], len[3], len[4]), string.rep(" ", 16)); g:close()
    T.raises(function() mat.read(dir .. "/hlen.npy") end, len[5])
  end
  T.raises(function() data.load(dir .. "/a.npy", { sep = ";" }) end, "applies to CSV files")
  T.raises(function() mat.batch(3, 2):save(dir .. "/batch.npy") end, "a batch of 3 matrices")
end)

local function have_numpy()
  return os.execute("python3 -c 'import numpy' >/dev/null 2>&1") == true
end

T.test("npy: files numpy writes read back, and numpy reads ours", function()
  if not have_numpy() then T.skip("numpy is not importable (pip install numpy to check against it)") end
  local py = string.format([[
import numpy as np
a = np.arange(12, dtype=np.float64).reshape(4, 3) / 4
np.save('%s/np_c8.npy', a)
np.save('%s/np_f4.npy', np.asfortranarray(a.astype(np.float32)))
b = np.load('%s/m_f64col.npy'); c = np.load('%s/iris.npy')
assert b.shape == (5, 3) and b.dtype == np.float64 and np.isfortran(b)
assert c.shape == (150, 5) and c.dtype == np.float32 and abs(c[0, 0] - 5.1) < 1e-6
print('ok')
]], dir, dir, dir, dir)
  local f = assert(io.open(dir .. "/check.py", "w")); f:write(py); f:close()
  local h = assert(io.popen("python3 " .. dir .. "/check.py 2>&1"))
  local out = h:read("a"); h:close()
  T.ok(out:find("ok", 1, true), "numpy side: " .. out)
  local A = mat.read(dir .. "/np_c8.npy")
  T.eq(A.layout, "row"); T.eq(A:get(2, 3), 5 / 4)
  local B = mat.read(dir .. "/np_f4.npy")
  T.eq(B.layout, "col"); T.eq(B.dtype, "f32"); T.eq(B:get(4, 1), 9 / 4)
  local d = data.load(dir .. "/np_c8.npy")
  T.eq(d.rows, 4); T.eq(d.task, "regression")
end)

T.test("npy: a huge shape fails the truncation check; Trueish and repeated keys are refused", function()
  -- (2^61 - 1) x 1 f8 needs 2^64 - 8 bytes: the size check wrapped and malloc was asked for it
  local huge = npy(dir .. "/huge.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693951, 1), }", string.rep("\0", 16))
  T.raises(function() mat.read(huge) end, "truncated")
  T.raises(function() data.load(huge) end, "2305843009213693951")
  local big = npy(dir .. "/big.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "")
  T.raises(function() mat.read(big) end, "too large")
  local tish = npy(dir .. "/trueish.npy", 1, "{'descr': '<f8', 'fortran_order': Trueish, 'shape': (1, 1), }", string.rep("\0", 8))
  T.raises(function() mat.read(tish) end, "fortran_order must be True or False")
  local fish = npy(dir .. "/falsey.npy", 1, "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (1, 1), }", string.rep("\0", 8))
  T.raises(function() data.load(fish) end, "fortran_order must be True or False")
  local two = npy(dir .. "/twoshapes.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), 'shape': (2, 2), }", string.rep("\0", 32))
  T.raises(function() mat.read(two) end, "names 'shape' twice")
  local mixed = npy(dir .. "/twodescr.npy", 1, "{'descr': '<f8', \"descr\": '<f4', 'fortran_order': False, 'shape': (1, 1), }", string.rep("\0", 8))
  T.raises(function() mat.read(mixed) end, "names 'descr' twice")
  -- the literals themselves still read, whitespace and all
  local ok = npy(dir .. "/okspace.npy", 1, "{'descr': '<f8', 'fortran_order': True , 'shape': (1, 1), }", string.pack("<d", 2.5))
  T.eq(mat.read(ok)[1][1], 2.5)
end)
