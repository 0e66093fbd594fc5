-- Written for zerotrace: the `callstacks.symbolize` module. Frames of a
-- binary that the trace left unnamed (a table or subquery with columns
-- file_name, the ELF file's path; rel_pc, the address as the file states
-- it; mapping_id and address, carried through to join the result back)
-- are named from the binary's DWARF, each inlined function its own row,
-- innermost first: columns function_name, file_name (the source file),
-- line_number, mapping_id and address. An address the binary does not
-- name gives `<invalid>`, `<invalid>` and 0; a file that cannot be read
-- gives NULLs. The binaries are read from the filesystem, so the trace
-- processor must run with --allow-sql-file-access. Computed natively
-- (src/sql/symbolize.rs).

-- The frames of `frames` named from their binaries' debug information.
CREATE PERFETTO MACRO _callstack_frame_symbolize(
  frames TableOrSubquery
)
RETURNS TableOrSubquery
AS (
  SELECT
    s.function_name,
    s.file_name,
    s.line_number,
    s.mapping_id,
    s.address
  FROM __intrinsic_symbolize((
    SELECT __intrinsic_graph_rows_agg(f.file_name, f.rel_pc, f.mapping_id, f.address)
    FROM (SELECT * FROM $frames) AS f
  )) AS s
);
