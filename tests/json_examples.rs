//! Every JSON example of the documents (README.md, docs/ and the rest), checked against what the service itself
//! describes, strictly (`racing::http::strict`): a field the description does not name
//! fails, and so does a required field missing from an object written whole. An example
//! may leave parts out, written `…`: an item of a list, a property's value, or members of
//! an object (which is then checked without its `required` list). Checked:
//!
//! - each ```json block, which names what it shows on the line before it:
//!   `<!-- json: GET /api/v1/horses/{horse_no} -->` (the operation's 200 answer; another
//!   status after the path), `<!-- json: webhook result -->` (that webhook's payload), or
//!   `<!-- json: event -->` (one feed event, validated as the service validates events).
//!   The feeding guide's blocks under `<!-- example: ... -->` are events sent for real by
//!   `tests/feeding.rs`;
//! - each line of a fenced block that is a frame: `< {...}` (the server's, on the socket),
//!   `data: {...}` (the server's, as Server-Sent Events) and `> {...}` (a client's, but
//!   one the next line answers with an `error` frame: a refusal shown), against the
//!   AsyncAPI document's message of its `type`;
//! - each line of a fenced block that is an error answer, `404 {"error":...}`, against the
//!   OpenAPI document's error body.

use serde_json::Value;

use crate::architecture::read;
use crate::documents::documents;

/// How an example marks what it leaves out.
const ELISION: &str = "…";

/// A fenced block: its language, its lines, the line its fence opens at, and the last
/// line that is not blank before the fence.
struct Block {
    language: String,
    lines: Vec<String>,
    line: usize,
    before: String,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut before = String::new();
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (None, Some(language)) => {
                open = Some(Block {
                    language: language.trim().to_owned(),
                    lines: Vec::new(),
                    line: i + 1,
                    before: std::mem::take(&mut before),
                })
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => block.lines.push(line.to_owned()),
            (None, None) if !line.trim().is_empty() => before = line.trim().to_owned(),
            (None, None) => {}
        }
    }
    blocks
}

/// `text` as JSON, its elisions (`…` or `...` outside strings) written as JSON: an item
/// or a value becomes the string `…`, members of an object a member `"…": "…"`.
fn with_elisions(text: &str) -> Result<Value, String> {
    let mut json = String::with_capacity(text.len());
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut last = ' ';
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let elision = ["…", "..."].into_iter().find(|e| rest.starts_with(e));
        match elision {
            Some(e) if !in_string => {
                let written = match (last, stack.last()) {
                    (':', _) | (_, Some('[')) => format!("\"{ELISION}\""),
                    _ => format!("\"{ELISION}\":\"{ELISION}\""),
                };
                json.push_str(&written);
                last = '"';
                rest = &rest[e.len()..];
                continue;
            }
            _ => {}
        }
        json.push(c);
        rest = &rest[c.len_utf8()..];
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => stack.push(c),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last = c;
        }
    }
    let mut values = serde_json::Deserializer::from_str(&json).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(format!("not JSON ({e}): {json}")),
        None => Err("no JSON".to_owned()),
    }
}

fn openapi() -> Value {
    serde_json::to_value(&*racing::http::OPENAPI).expect("the OpenAPI document")
}

/// Checks `value` against `schema` of `description`, elisions allowed.
fn check(description: &Value, schema: &Value, value: &Value, what: &str) -> Result<(), String> {
    let mut validator = racing::http::strict::Validator::with_elisions(description, ELISION);
    validator.check(what, schema, value, what)
}

/// The schema of what a `<!-- json: ... -->` mark names, in the OpenAPI document.
fn marked_schema<'a>(spec: &'a Value, mark: &str) -> Result<&'a Value, String> {
    let words: Vec<&str> = mark.split_whitespace().collect();
    let found = match words.as_slice() {
        ["webhook", name] => {
            &spec["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]["schema"]
        }
        [method, path, rest @ ..] if path.starts_with('/') => {
            let status = rest.first().copied().unwrap_or("200");
            &spec["paths"][path][method.to_lowercase()]["responses"][status]["content"]
                ["application/json"]["schema"]
        }
        _ => return Err(format!("`{mark}` names nothing this test knows")),
    };
    if found.is_object() {
        Ok(found)
    } else {
        Err(format!("the OpenAPI document has no schema for `{mark}`"))
    }
}

/// What is wrong with the ```json blocks of one document.
fn json_blocks(name: &str, text: &str, spec: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    for block in blocks(text).into_iter().filter(|b| b.language == "json") {
        let at = format!("{name}:{}", block.line);
        let body = block.lines.join("\n");
        if block.before.starts_with("<!-- example:") {
            continue;
        }
        let Some(mark) = block
            .before
            .strip_prefix("<!-- json:")
            .and_then(|m| m.strip_suffix("-->"))
            .map(str::trim)
        else {
            wrong.push(format!(
                "{at}: a JSON example without `<!-- json: ... -->` naming what it shows"
            ));
            continue;
        };
        let checked = if mark == "event" {
            racing_events::Envelope::check(body.as_bytes())
                .map(|_| ())
                .map_err(|e| format!("{e:?}"))
        } else {
            with_elisions(&body).and_then(|value| {
                let schema = marked_schema(spec, mark)?;
                check(spec, schema, &value, mark)
            })
        };
        if let Err(e) = checked {
            wrong.push(format!("{at} ({mark}): {e}"));
        }
    }
    wrong
}

/// What is wrong with the frames and error answers written in fenced blocks; `checked`
/// counts those read.
fn lines_in_blocks(name: &str, text: &str, spec: &Value, checked: &mut usize) -> Vec<String> {
    let error = marked_schema(spec, "GET /api/v1/horses/{horse_no} 404").cloned();
    let mut wrong = Vec::new();
    for block in blocks(text).into_iter().filter(|b| b.language != "json") {
        for (i, line) in block.lines.iter().enumerate() {
            let at = format!("{name}:{}", block.line + 1 + i);
            let line = line.trim();
            // A client's message answered by an `error` frame shows a refusal.
            let refused = block
                .lines
                .get(i + 1)
                .is_some_and(|next| next.trim().starts_with("< {\"type\":\"error\""));
            if line.starts_with("> ") && refused {
                continue;
            }
            let frame = [("< ", true), ("data: ", true), ("> ", false)]
                .into_iter()
                .find_map(|(prefix, server)| Some((line.strip_prefix(prefix)?, server)))
                .filter(|(json, _)| json.starts_with('{'));
            let answer = line.split_once(' ').filter(|(status, json)| {
                status.len() == 3
                    && status.bytes().all(|b| b.is_ascii_digit())
                    && json.starts_with("{\"error\"")
            });
            let checked_now = match (frame, answer) {
                (Some((json, server)), _) => with_elisions(json).and_then(|value| {
                    racing::http::asyncapi::check_written(&value, server, ELISION)
                }),
                (None, Some((_, json))) => with_elisions(json).and_then(|value| {
                    let schema = error.as_ref().map_err(Clone::clone)?;
                    check(spec, schema, &value, "error")
                }),
                (None, None) => continue,
            };
            *checked += 1;
            if let Err(e) = checked_now {
                wrong.push(format!("{at}: {e}"));
            }
        }
    }
    wrong
}

#[test]
fn every_json_example_of_readme_and_the_guides_is_what_the_service_describes() {
    let spec = openapi();
    let mut wrong = Vec::new();
    let (mut json, mut lines) = (0, 0);
    for name in documents() {
        let text = read(&name);
        wrong.extend(json_blocks(&name, &text, &spec));
        wrong.extend(lines_in_blocks(&name, &text, &spec, &mut lines));
        json += blocks(&text)
            .iter()
            .filter(|b| b.language == "json")
            .count();
    }
    assert!(
        json >= 20 && lines >= 40,
        "only {json} JSON blocks and {lines} lines read"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn an_example_that_leaves_out_a_required_field_or_adds_one_fails() {
    let spec = openapi();
    let profile = "GET /api/v1/horses/{horse_no}";
    let schema = marked_schema(&spec, profile).expect("the profile's schema");
    let whole = r#"{"horse_no":"H095","horse_name":"VIVA THUNDER","country_of_origin":"NZ","colour":"Chestnut","sex":"Gelding","age":5,"trainer":"M Newnham","owner":"The Golden Racing Syndicate","total_stakes":663750,"starts":8,"wins":1,"places":2,"seconds":0,"thirds":1,"sire":"I Am Invincible","dam":"Velvet Silver","dam_sire":"Not A Single Doubt","import_type":"PP","current_rating":40,"season_start_rating":40,"season_stakes":126500}"#;
    let value = |text: &str| with_elisions(text).expect("JSON");
    check(&spec, schema, &value(whole), profile).expect("the whole profile");
    let missing = whole.replace(r#""horse_name":"VIVA THUNDER","#, "");
    let e = check(&spec, schema, &value(&missing), profile).expect_err("a field missing");
    assert!(e.contains("horse_name"), "{e}");
    // Written as left out, the same is not missing.
    let elided = missing.replace(r#""age":5,"#, r#""age":5,…,"#);
    check(&spec, schema, &value(&elided), profile).expect("members left out");
    let added = whole.replace(r#""age":5,"#, r#""age":5,"weight":1180,"#);
    let e = check(&spec, schema, &value(&added), profile).expect_err("a field added");
    assert!(e.contains("weight"), "{e}");
    // A list item and a value left out; strings with dots are strings.
    assert_eq!(
        value(r#"{"a":[1,…],"b":…,"c":"x...y",…}"#),
        serde_json::json!({"a":[1,"…"],"b":"…","c":"x...y","…":"…"})
    );
    // A block without its mark, and a mark naming nothing, are reported.
    let doc = "text\n\n```json\n{}\n```\n\n<!-- json: GET /nowhere -->\n```json\n{}\n```\n";
    let wrong = json_blocks("doc.md", doc, &spec);
    assert_eq!(wrong.len(), 2, "{wrong:?}");
    // A frame of an unknown type, and one with a field its message lacks.
    let frames = "```\n< {\"type\":\"nothing\"}\n< {\"type\":\"pong\",\"extra\":1}\n```\n";
    assert_eq!(lines_in_blocks("doc.md", frames, &spec, &mut 0).len(), 2);
}

/// The examples the OpenAPI document itself gives, each schema's: `(schema, example)`.
fn schema_examples(spec: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (name, schema) in spec["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let many = schema["examples"].as_array().into_iter().flatten();
        for example in many.chain(schema.get("example")) {
            out.push((name.clone(), example.clone()));
        }
    }
    out
}

#[test]
fn every_example_the_openapi_document_gives_is_what_its_schema_describes() {
    let spec = openapi();
    let examples = schema_examples(&spec);
    assert!(examples.len() >= 10, "only {} examples", examples.len());
    let wrong: Vec<String> = examples
        .iter()
        .filter_map(|(name, example)| {
            let schema = serde_json::json!({ "$ref": format!("#/components/schemas/{name}") });
            let mut validator = racing::http::strict::Validator::new(&spec);
            validator.check(name, &schema, example, name).err()
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
