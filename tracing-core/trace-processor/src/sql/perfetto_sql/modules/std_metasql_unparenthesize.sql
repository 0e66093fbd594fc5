-- Written for zerotrace: the `std.metasql.unparenthesize` module. It
-- provides `metasql_unparenthesize_exprlist!((a, b, c))`, which expands to
-- the bare list `a, b, c`, for places that take a list without
-- parentheses (GROUP BY, PARTITION BY).

CREATE PERFETTO MACRO _zt_unparen_one(x Expr)
RETURNS Expr
AS $x;

CREATE PERFETTO MACRO metasql_unparenthesize_exprlist(expr ExprList)
RETURNS UnparenExprList
AS __intrinsic_token_apply!(_zt_unparen_one, $expr);
