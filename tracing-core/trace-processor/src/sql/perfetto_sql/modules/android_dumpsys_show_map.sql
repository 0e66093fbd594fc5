-- Written for zerotrace: the `android.dumpsys.show_map` module.
-- `android_dumpsys_show_map`: the mappings `showmap` printed for each
-- process in a bug report's `SHOW MAP <pid> <name>…` sections, one row per
-- mapped object, every size in KB. A section's rows are the numeric lines
-- after its header (the line of column names, `virtual shared shared
-- private private Anon… Shmem… File… Shared… Private…`) up to the next
-- section's header; the `TOTAL` line is left out (it is the sum of the
-- others), and so is the last section, which no header closes.
-- Columns are split on runs of up to 32 spaces, so an object's name is its
-- first word only.

-- The lines of the SHOW MAP sections, their runs of spaces made commas.
CREATE PERFETTO TABLE _show_maps AS
SELECT
  id,
  replace(
    replace(
      replace(replace(replace(trim(line), '  ', ' '), '  ', ' '), '  ', ' '),
      '  ',
      ' '
    ),
    ' ',
    ','
  ) AS line,
  section
FROM android_dumpstate
WHERE section GLOB 'SHOW MAP*';

-- Each section's header line with the section's process, and where the
-- next section's header is.
CREATE PERFETTO TABLE _show_maps_process AS
SELECT
  h.*,
  CAST(replace(str_split(h.section, ' ', 2), ':', '') AS INTEGER) AS pid,
  trim(str_split(h.section, ' ', 3)) AS process_name,
  lead(h.id) OVER (ORDER BY h.id) AS next_id
FROM _show_maps AS h
WHERE trim(h.line) GLOB 'virtual*shared*shared*private*private*Anon*Shmem*File*Shared*Private*'
GROUP BY h.section;

-- Each line from a header to the next, with the header's process.
CREATE PERFETTO TABLE _show_maps_process_boundary AS
SELECT m.*, p.process_name, p.pid
FROM _show_maps AS m
JOIN _show_maps_process AS p ON m.id >= p.id AND m.id <= p.next_id;

CREATE PERFETTO TABLE android_dumpsys_show_map(
  process_name STRING,
  pid JOINID(process.pid),
  vss_kb LONG,
  rss_kb LONG,
  pss_kb LONG,
  shared_clean_kb LONG,
  shared_dirty_kb LONG,
  private_clean_kb LONG,
  private_dirty_kb LONG,
  swap_kb LONG,
  swap_pss_kb LONG,
  anon_huge_pages_kb LONG,
  shmem_pmd_mapped_kb LONG,
  file_pmd_mapped_kb LONG,
  shared_huge_tlb_kb LONG,
  private_hugetlb_kb LONG,
  locked_kb LONG,
  mapping_count LONG,
  mapped_object STRING
)
AS
SELECT
  process_name,
  pid,
  CAST(str_split(line, ',', 0) AS INTEGER) AS vss_kb,
  CAST(str_split(line, ',', 1) AS INTEGER) AS rss_kb,
  CAST(str_split(line, ',', 2) AS INTEGER) AS pss_kb,
  CAST(str_split(line, ',', 3) AS INTEGER) AS shared_clean_kb,
  CAST(str_split(line, ',', 4) AS INTEGER) AS shared_dirty_kb,
  CAST(str_split(line, ',', 5) AS INTEGER) AS private_clean_kb,
  CAST(str_split(line, ',', 6) AS INTEGER) AS private_dirty_kb,
  CAST(str_split(line, ',', 7) AS INTEGER) AS swap_kb,
  CAST(str_split(line, ',', 8) AS INTEGER) AS swap_pss_kb,
  CAST(str_split(line, ',', 9) AS INTEGER) AS anon_huge_pages_kb,
  CAST(str_split(line, ',', 10) AS INTEGER) AS shmem_pmd_mapped_kb,
  CAST(str_split(line, ',', 11) AS INTEGER) AS file_pmd_mapped_kb,
  CAST(str_split(line, ',', 12) AS INTEGER) AS shared_huge_tlb_kb,
  CAST(str_split(line, ',', 13) AS INTEGER) AS private_hugetlb_kb,
  CAST(str_split(line, ',', 14) AS INTEGER) AS locked_kb,
  CAST(str_split(line, ',', 15) AS INTEGER) AS mapping_count,
  str_split(line, ',', 16) AS mapped_object
FROM _show_maps_process_boundary
WHERE trim(line) GLOB '[0-9]*'
  AND str_split(line, ',', 16) != 'TOTAL';
