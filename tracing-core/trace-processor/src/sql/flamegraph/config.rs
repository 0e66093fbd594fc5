//! `__intrinsic_flamegraph_config(tag, values..., ...)`: the query-time
//! configuration of a flamegraph, written as a flat list of tags each
//! followed by its values (`'view', 'PIVOT'`, `'filter', 'SHOW_STACK',
//! 'foo', 'i'`, ...). Parsed eagerly so that a mistake is reported where
//! it is written; the function's value is the argument list itself,
//! encoded as JSON text, which the operator decodes again.

use super::error::FlamegraphError;

/// The structural orientation of the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// Callers above callees, from every root.
    TopDown,
    /// Callees above callers, from every frame that carries a value.
    BottomUp,
    /// The callees and the callers of the frames matching the pattern.
    Pivot,
    /// The callees of the frames matching the pattern.
    FromFrame,
}

impl View {
    /// Whether the view builds the downward (callee) half.
    pub(crate) fn downward(self) -> bool {
        matches!(self, View::TopDown | View::Pivot | View::FromFrame)
    }

    /// Whether the view needs a pattern (`view_pattern`).
    pub(crate) fn patterned(self) -> bool {
        matches!(self, View::Pivot | View::FromFrame)
    }
}

/// A regular expression and whether it ignores case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The expression.
    pub pattern: String,
    /// Flag `i`.
    pub case_insensitive: bool,
}

/// What a filter does to the frames it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterKind {
    /// Keep only the stacks through a matching frame (all such filters).
    ShowStack,
    /// Drop the stacks through a matching frame.
    HideStack,
    /// Fold a matching frame into its caller.
    HideFrame,
}

/// One filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    /// Its kind.
    pub kind: FilterKind,
    /// What it matches.
    pub pattern: Pattern,
}

/// How an aggregate column folds the values of merged frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aggregate {
    /// Their sum.
    Sum,
    /// The first value, or the first and how many distinct values.
    OneOrSummary,
    /// Every value, comma-separated.
    ConcatWithComma,
}

/// An aggregate column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AggregateSpec {
    /// How values fold.
    pub aggregate: Aggregate,
    /// The source column.
    pub input: String,
    /// The output column (must equal `input`).
    pub output: String,
}

/// A parsed configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    /// The view.
    pub view: View,
    /// The pattern of PIVOT and FROM_FRAME.
    pub view_pattern: Option<Pattern>,
    /// The filters, in order.
    pub filters: Vec<Filter>,
    /// Columns that, with the name, tell frames apart.
    pub grouping: Vec<String>,
    /// Value columns; the first is the one laid out.
    pub values: Vec<String>,
    /// Aggregate columns.
    pub aggregates: Vec<AggregateSpec>,
}

fn text<'a>(context: &str, v: Option<&'a str>) -> Result<&'a str, FlamegraphError> {
    v.ok_or_else(|| FlamegraphError::Config(format!("{context}: expected a string value")))
}

fn token<T: Copy>(
    context: &str,
    v: Option<&str>,
    tokens: &[(&str, T)],
) -> Result<T, FlamegraphError> {
    let t = text(context, v)?;
    tokens
        .iter()
        .find(|(name, _)| *name == t)
        .map(|(_, parsed)| *parsed)
        .ok_or_else(|| FlamegraphError::Config(format!("{context}: unknown value '{t}'")))
}

fn pattern(
    context: &str,
    p: Option<&str>,
    flags: Option<&str>,
) -> Result<Pattern, FlamegraphError> {
    let pattern = text(context, p)?.to_owned();
    let flags = text(context, flags)?;
    if !flags.is_empty() && flags != "i" {
        return Err(FlamegraphError::Config(format!(
            "{context}: unknown regex flags '{flags}'"
        )));
    }
    Ok(Pattern {
        pattern,
        case_insensitive: flags == "i",
    })
}

/// Parses the function's arguments; `None` stands for a value that is not
/// text.
pub(crate) fn parse(args: &[Option<&str>]) -> Result<Query, FlamegraphError> {
    let mut q = Query {
        view: View::TopDown,
        view_pattern: None,
        filters: Vec::new(),
        grouping: Vec::new(),
        values: Vec::new(),
        aggregates: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let Some(tag) = args.get(i).copied().flatten() else {
            return Err(FlamegraphError::Config(format!(
                "expected a tag string at argument {i}"
            )));
        };
        let arity = match tag {
            "view" | "grouping" | "value" => 1,
            "view_pattern" => 2,
            "filter" | "aggregate" => 3,
            _ => {
                return Err(FlamegraphError::Config(format!(
                    "unknown tag '{tag}' at argument {i}"
                )));
            }
        };
        let Some(v) = args.get(i + 1..i + 1 + arity) else {
            return Err(FlamegraphError::Config(format!(
                "tag '{tag}' expects {arity} value(s)"
            )));
        };
        let at = |k: usize| v.get(k).copied().flatten();
        match tag {
            "view" => {
                q.view = token(
                    "view",
                    at(0),
                    &[
                        ("TOP_DOWN", View::TopDown),
                        ("BOTTOM_UP", View::BottomUp),
                        ("PIVOT", View::Pivot),
                        ("FROM_FRAME", View::FromFrame),
                    ],
                )?
            }
            "view_pattern" => q.view_pattern = Some(pattern("view_pattern", at(0), at(1))?),
            "filter" => {
                let kind = token(
                    "filter",
                    at(0),
                    &[
                        ("SHOW_STACK", FilterKind::ShowStack),
                        ("HIDE_STACK", FilterKind::HideStack),
                        ("HIDE_FRAME", FilterKind::HideFrame),
                    ],
                )?;
                let pattern = pattern("filter", at(1), at(2))?;
                q.filters.push(Filter { kind, pattern });
            }
            "grouping" => q.grouping.push(text("grouping", at(0))?.to_owned()),
            "value" => q.values.push(text("value", at(0))?.to_owned()),
            _ => {
                let aggregate = token(
                    "aggregate",
                    at(0),
                    &[
                        ("SUM", Aggregate::Sum),
                        ("ONE_OR_SUMMARY", Aggregate::OneOrSummary),
                        ("CONCAT_WITH_COMMA", Aggregate::ConcatWithComma),
                    ],
                )?;
                let input = text("aggregate", at(1))?.to_owned();
                let output = text("aggregate", at(2))?.to_owned();
                q.aggregates.push(AggregateSpec {
                    aggregate,
                    input,
                    output,
                });
            }
        }
        i += 1 + arity;
    }
    if q.view.patterned() != q.view_pattern.is_some() {
        return Err(FlamegraphError::Config(
            "PIVOT and FROM_FRAME require a view pattern".into(),
        ));
    }
    Ok(q)
}

/// The key of the JSON object the config function answers with.
const KEY: &str = "flamegraph_config";

/// The function's value for `args` (already parsed without error).
pub(crate) fn encode(args: &[&str]) -> String {
    serde_json::json!({ KEY: args }).to_string()
}

/// The configuration a value of the config function holds.
pub(crate) fn decode(value: &str) -> Result<Query, FlamegraphError> {
    let not_config = || FlamegraphError::Source("expected a flamegraph config".into());
    let v: serde_json::Value = serde_json::from_str(value).map_err(|_| not_config())?;
    let list = v
        .get(KEY)
        .and_then(|l| l.as_array())
        .ok_or_else(not_config)?;
    let args: Vec<Option<&str>> = list.iter().map(|a| a.as_str()).collect();
    parse(&args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some<'a>(v: &[&'a str]) -> Vec<Option<&'a str>> {
        v.iter().map(|s| Some(*s)).collect()
    }

    #[test]
    fn tags_parse_into_a_query_and_round_trip() {
        let args = [
            "value",
            "value",
            "view",
            "PIVOT",
            "view_pattern",
            "^b$",
            "i",
            "filter",
            "HIDE_FRAME",
            "x",
            "",
            "grouping",
            "g",
            "aggregate",
            "SUM",
            "s",
            "s",
        ];
        let q = parse(&some(&args)).expect("parses");
        assert_eq!(q.view, View::Pivot);
        assert_eq!(
            q.view_pattern,
            Some(Pattern {
                pattern: "^b$".into(),
                case_insensitive: true
            })
        );
        assert_eq!(q.filters.len(), 1);
        assert_eq!(q.grouping, vec!["g"]);
        assert_eq!(q.values, vec!["value"]);
        assert_eq!(q.aggregates[0].aggregate, Aggregate::Sum);
        assert_eq!(decode(&encode(&args)), Ok(q));
    }

    #[test]
    fn mistakes_are_errors_with_upstream_wording() {
        let err = |a: &[&str]| parse(&some(a)).expect_err("refused").to_string();
        assert_eq!(
            err(&["bogus", "x"]),
            "flamegraph_config: unknown tag 'bogus' at argument 0"
        );
        assert_eq!(
            err(&["filter", "SHOW_STACK"]),
            "flamegraph_config: tag 'filter' expects 3 value(s)"
        );
        assert_eq!(
            err(&["view", "SIDEWAYS"]),
            "flamegraph_config: view: unknown value 'SIDEWAYS'"
        );
        assert_eq!(
            err(&["view", "PIVOT"]),
            "flamegraph_config: PIVOT and FROM_FRAME require a view pattern"
        );
        assert_eq!(
            err(&["view_pattern", "a", "x"]),
            "flamegraph_config: view_pattern: unknown regex flags 'x'"
        );
        assert_eq!(
            parse(&[Some("value"), None])
                .expect_err("refused")
                .to_string(),
            "flamegraph_config: value: expected a string value"
        );
        assert!(decode("not json").is_err());
        assert!(decode("{\"other\": []}").is_err());
    }
}
