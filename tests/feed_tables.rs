//! The feeding guide's tables of events against the feed's JSON Schema, the latest
//! version's (the one the service takes): `docs/feeding.md`'s "Event types" lists every
//! type with its subject and the fields of its `data`, `[bracketed]` where optional, and
//! its "Fields added after 1.0" gives each field's and type's version. Both are read
//! here and must say what the schema says: `required` lists, `x-subject` and `x-since`.

use std::collections::{BTreeMap, BTreeSet};

use racing_events::schema::{feed_schema, FeedVersion};
use serde_json::Value;

/// A field as the guide lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    name: String,
    optional: bool,
    /// The fields of each item, for a list of objects (`runners[{...}]`).
    items: Option<Vec<Field>>,
}

/// The fields of a `data` cell: `a, [b, c], list[{d, [e]}]` (backticks and words before
/// the first field left out).
fn fields(cell: &str) -> Vec<Field> {
    let start = cell.find(['`', '[']).unwrap_or(cell.len());
    let text: String = cell[start..].chars().filter(|c| *c != '`').collect();
    let mut tokens = tokenize(&text).into_iter().peekable();
    let parsed = list(&mut tokens, false, None);
    assert!(tokens.next().is_none(), "{cell}: more after the fields");
    parsed
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if "[]{},".contains(c) {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    tokens
}

/// Fields up to `end` (or the end), each optional if `optional`.
fn list(
    tokens: &mut std::iter::Peekable<impl Iterator<Item = String>>,
    optional: bool,
    end: Option<&str>,
) -> Vec<Field> {
    let mut fields = Vec::new();
    while let Some(token) = tokens.next() {
        match token.as_str() {
            "," => {}
            t if Some(t) == end => return fields,
            "[" => fields.extend(list(tokens, true, Some("]"))),
            t if t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                let items = (tokens.peek().map(String::as_str) == Some("[")).then(|| {
                    tokens.next();
                    assert_eq!(tokens.next().as_deref(), Some("{"), "{t}[ without {{");
                    let items = list(tokens, false, Some("}"));
                    assert_eq!(tokens.next().as_deref(), Some("]"), "{t}[{{...}} without ]");
                    items
                });
                fields.push(Field {
                    name: t.to_owned(),
                    optional,
                    items,
                });
            }
            other => panic!("unexpected `{other}` among the fields"),
        }
    }
    assert!(end.is_none(), "no closing {end:?}");
    fields
}

/// The rows of the guide's table that follows `heading`, as cells.
fn table(guide: &str, heading: &str) -> Vec<Vec<String>> {
    let (_, rest) = guide
        .split_once(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("feeding.md has no `{heading}`"));
    rest.lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cells: Vec<String> = row.split('|').map(|c| c.trim().to_owned()).collect();
            cells[1..cells.len() - 1].to_vec()
        })
        .collect()
}

fn guide() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/feeding.md"))
        .expect("docs/feeding.md")
}

fn schema() -> Value {
    serde_json::to_value(feed_schema(FeedVersion::LATEST)).expect("the schema")
}

/// The definition `$ref` names.
fn def<'a>(schema: &'a Value, reference: &Value) -> &'a Value {
    let name = reference
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .unwrap_or_else(|| panic!("not a definition: {reference}"));
    &schema["$defs"][name]
}

/// What is wrong with `listed` as the fields of `definition`, at `at`.
fn compare(schema: &Value, definition: &Value, listed: &[Field], at: &str) -> Vec<String> {
    let mut wrong = Vec::new();
    let properties = definition["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required: BTreeSet<&str> = definition["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let names: BTreeSet<&str> = listed.iter().map(|f| f.name.as_str()).collect();
    for name in properties.keys().filter(|n| !names.contains(n.as_str())) {
        wrong.push(format!("{at}: `{name}` is not listed"));
    }
    for field in listed {
        let Some(property) = properties.get(&field.name) else {
            wrong.push(format!("{at}: `{}` is not in the schema", field.name));
            continue;
        };
        let is_required = required.contains(field.name.as_str());
        if field.optional == is_required {
            let (said, is) = match field.optional {
                true => ("optional", "required"),
                false => ("required", "optional"),
            };
            wrong.push(format!(
                "{at}: `{}` is listed {said}; it is {is}",
                field.name
            ));
        }
        match (&field.items, property["items"].get("$ref")) {
            (Some(items), Some(reference)) => {
                let at = format!("{at}.{}[]", field.name);
                wrong.extend(compare(schema, def(schema, reference), items, &at));
            }
            (None, None) => {}
            _ => wrong.push(format!(
                "{at}: `{}` is listed as a list of objects where the schema has not one, or not",
                field.name
            )),
        }
    }
    wrong
}

#[test]
fn the_guides_event_types_are_the_schemas_with_their_fields_and_subjects() {
    let schema = schema();
    let guide = guide();
    let rows = table(&guide, "## Event types");
    let mut wrong = Vec::new();
    let mut listed = BTreeSet::new();
    for row in &rows {
        let [kind, subject, data, ..] = row.as_slice() else {
            panic!("a row of fewer than three cells: {row:?}");
        };
        let kind = kind.trim_matches('`');
        listed.insert(kind.to_owned());
        let envelope = &schema["$defs"][format!("{kind}Envelope")];
        if !envelope.is_object() {
            wrong.push(format!("`{kind}` is no event type of the schema"));
            continue;
        }
        if subject.trim_matches('`') != envelope["x-subject"] {
            wrong.push(format!(
                "`{kind}`'s subject is {subject}; the schema says {}",
                envelope["x-subject"]
            ));
        }
        let body = def(&schema, &envelope["properties"]["data"]["$ref"]);
        wrong.extend(compare(&schema, body, &fields(data), kind));
    }
    let types: BTreeSet<String> = schema["$defs"]["Envelope"]["properties"]["type"]["enum"]
        .as_array()
        .expect("the types")
        .iter()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect();
    for missing in types.difference(&listed) {
        wrong.push(format!("`{missing}` is not in the table"));
    }
    assert!(
        wrong.is_empty(),
        "docs/feeding.md, Event types:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_guides_versions_of_fields_and_types_are_the_schemas() {
    let schema = schema();
    // (what, type) -> version, as the schema says: every field and type after 1.0.
    let mut said = BTreeMap::new();
    for (name, definition) in schema["$defs"].as_object().expect("definitions") {
        if let (Some(kind), Some(since)) = (
            name.strip_suffix("Envelope"),
            definition["x-since"].as_str(),
        ) {
            if since != "1.0" {
                said.insert((kind.to_owned(), "the type".to_owned()), since.to_owned());
            }
        }
        for (field, property) in definition["properties"].as_object().into_iter().flatten() {
            if let Some(since) = property["x-since"].as_str().filter(|s| *s != "1.0") {
                said.insert((field.clone(), name.clone()), since.to_owned());
            }
        }
    }
    let mut listed = BTreeMap::new();
    for row in table(&guide(), "### Fields added after 1.0") {
        let [what, of, since, ..] = row.as_slice() else {
            panic!("a row of fewer than three cells: {row:?}");
        };
        for item in what.split(',') {
            let item = item.trim().trim_matches('`').to_owned();
            listed.insert((item, of.trim_matches('`').to_owned()), since.clone());
        }
    }
    assert_eq!(
        listed, said,
        "docs/feeding.md's \"Fields added after 1.0\" (left) against the schema (right)"
    );
}

#[test]
fn a_field_listed_wrong_is_named() {
    let schema = schema();
    let scratched = def(
        &schema,
        &schema["$defs"]["RunnerScratchedEnvelope"]["properties"]["data"]["$ref"],
    );
    let right = fields("`date, [venue], race_number, horse_no`");
    assert!(compare(&schema, scratched, &right, "s").is_empty());
    let wrong = compare(&schema, scratched, &fields("`date, venue, race_no`"), "s");
    assert_eq!(wrong.len(), 4, "{wrong:?}");
    let nested = fields("a whole one: `a, [b, c], list[{d, [e]}]`, [`f`]");
    let names: Vec<(&str, bool)> = nested
        .iter()
        .map(|f| (f.name.as_str(), f.optional))
        .collect();
    assert_eq!(
        names,
        [
            ("a", false),
            ("b", true),
            ("c", true),
            ("list", false),
            ("f", true)
        ]
    );
    assert_eq!(nested[3].items.as_ref().map(Vec::len), Some(2));
}
