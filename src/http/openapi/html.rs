//! The API reference as one self-contained HTML page, rendered server-side from the same
//! OpenAPI value that `/api/v1/openapi.json` serves: inline CSS, no script, no external
//! style, font or image, so that it reads the same with no internet access.

use std::fmt::Write;

use serde_json::Value;

use crate::subscribe::pages::esc;
use utoipa::openapi::path::{Operation, Parameter};
use utoipa::openapi::security::{ApiKey, SecurityScheme};
use utoipa::openapi::{OpenApi, RefOr, Required, Response, Schema};

const STYLE: &str = "
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d2330;
 margin:0;background:#f7f8fa}
main{max-width:980px;margin:0 auto;padding:24px 28px 64px;background:#fff}
h1{font-size:26px;margin:8px 0}h2{font-size:21px;margin:36px 0 8px;border-bottom:2px solid #dde2ea;
 padding-bottom:4px}h3{font-size:17px;margin:28px 0 6px}h4{font-size:14px;margin:14px 0 4px;
 text-transform:uppercase;letter-spacing:.04em;color:#5a6475}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f0f2f6;
 border-radius:3px}code{padding:1px 4px}pre{padding:10px 12px;overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:4px 0 10px;font-size:14px}
th,td{border:1px solid #dde2ea;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f0f2f6;font-weight:600}
.method{display:inline-block;min-width:44px;text-align:center;font:600 12px/20px ui-monospace,
 monospace;color:#fff;background:#2f6f4f;border-radius:3px;margin-right:8px}
.op{border-left:3px solid #2f6f4f;padding-left:14px}
nav ul{columns:2;padding-left:20px}nav li{margin:2px 0}
.muted{color:#5a6475}a{color:#1f5fa8}
";

/// Renders the page.
pub(super) fn render(api: &OpenApi) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = esc(&api.info.title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body><main>\
         <h1>{title}</h1><p class=\"muted\">Version {} · OpenAPI {} · the same description \
         as JSON: <a href=\"openapi.json\"><code>/api/v1/openapi.json</code></a> · the live \
         WebSocket's frames as AsyncAPI 3.0: \
         <a href=\"asyncapi.json\"><code>/api/v1/asyncapi.json</code></a></p>",
        esc(&api.info.version),
        openapi_version(api),
    );
    if let Some(d) = &api.info.description {
        out.push_str(&prose(d));
    }
    contents(&mut out, api);
    authentication(&mut out, api);
    endpoints(&mut out, api);
    shared_responses(&mut out, api);
    schemas(&mut out, api);
    out.push_str("</main></body></html>\n");
    out
}

fn openapi_version(api: &OpenApi) -> String {
    serde_json::to_value(&api.openapi)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn operations(api: &OpenApi) -> impl Iterator<Item = (&str, &'static str, &Operation)> {
    api.paths.paths.iter().flat_map(|(path, item)| {
        [
            ("GET", &item.get),
            ("HEAD", &item.head),
            ("POST", &item.post),
            ("PUT", &item.put),
            ("PATCH", &item.patch),
            ("DELETE", &item.delete),
            ("OPTIONS", &item.options),
        ]
        .into_iter()
        .filter_map(move |(m, op)| op.as_ref().map(|op| (path.as_str(), m, op)))
    })
}

fn contents(out: &mut String, api: &OpenApi) {
    out.push_str(
        "<nav><h2>Contents</h2><ul><li><a href=\"#authentication\">Authentication</a></li>",
    );
    for (path, method, op) in operations(api) {
        let _ = write!(
            out,
            "<li><a href=\"#{}\"><code>{method} {}</code></a> {}</li>",
            super::super::described::anchor(method, path),
            esc(path),
            esc(op.summary.as_deref().unwrap_or_default())
        );
    }
    out.push_str(
        "<li><a href=\"#responses\">Shared responses</a></li>\
         <li><a href=\"#schemas\">Schemas</a></li></ul></nav>",
    );
}

fn authentication(out: &mut String, api: &OpenApi) {
    out.push_str(
        "<h2 id=\"authentication\">Authentication</h2><table><tr><th>scheme</th><th>how</th>\
         <th>description</th></tr>",
    );
    let schemes = api.components.iter().flat_map(|c| &c.security_schemes);
    for (name, scheme) in schemes {
        let (how, description) = match scheme {
            SecurityScheme::ApiKey(ApiKey::Header(v)) => (
                format!("header <code>{}</code>", esc(&v.name)),
                &v.description,
            ),
            SecurityScheme::ApiKey(ApiKey::Query(v)) => (
                format!("query parameter <code>{}</code>", esc(&v.name)),
                &v.description,
            ),
            SecurityScheme::ApiKey(ApiKey::Cookie(v)) => (
                format!("cookie <code>{}</code>", esc(&v.name)),
                &v.description,
            ),
            _ => ("other".to_owned(), &None),
        };
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>API key in {how}</td><td>{}</td></tr>",
            esc(name),
            inline(description.as_deref().unwrap_or_default())
        );
    }
    out.push_str("</table>");
    if let Some(global) = &api.security {
        let _ = write!(
            out,
            "<p>Every operation needs {} unless it says otherwise.</p>",
            requirement(global)
        );
    }
}

fn requirement(security: &[utoipa::openapi::security::SecurityRequirement]) -> String {
    let names: Vec<String> = security
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .filter_map(|v| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()))
        .map(|k| format!("<code>{}</code>", esc(&k.join(" + "))))
        .collect();
    names.join(" or ")
}

fn endpoints(out: &mut String, api: &OpenApi) {
    out.push_str("<h2 id=\"endpoints\">Endpoints</h2>");
    for (path, method, op) in operations(api) {
        let _ = write!(
            out,
            "<section class=\"op\" id=\"{}\"><h3><span class=\"method\">{method}</span><code>{}\
             </code></h3><p><strong>{}</strong></p>",
            super::super::described::anchor(method, path),
            esc(path),
            esc(op.summary.as_deref().unwrap_or_default()),
        );
        if let Some(d) = &op.description {
            out.push_str(&prose(d));
        }
        if let Some(security) = &op.security {
            let _ = write!(out, "<p>Key: {}.</p>", requirement(security));
        }
        parameters(out, op.parameters.as_deref().unwrap_or_default());
        responses(out, api, op);
        out.push_str("</section>");
    }
}

fn parameters(out: &mut String, params: &[Parameter]) {
    if params.is_empty() {
        out.push_str("<h4>Parameters</h4><p class=\"muted\">None.</p>");
        return;
    }
    out.push_str(
        "<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>required</th>\
         <th>description</th></tr>",
    );
    for p in params {
        let place = serde_json::to_value(&p.parameter_in)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let (kind, rules) = p.schema.as_ref().map(describe).unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{kind}{rules}</td><td>{}</td><td>{}</td></tr>",
            esc(&p.name),
            esc(&place),
            if matches!(p.required, Required::True) {
                "yes"
            } else {
                "no"
            },
            inline(p.description.as_deref().unwrap_or_default()),
        );
    }
    out.push_str("</table>");
}

fn responses(out: &mut String, api: &OpenApi, op: &Operation) {
    out.push_str(
        "<h4>Responses</h4><table><tr><th>status</th><th>description</th><th>body</th>\
         <th>headers</th></tr>",
    );
    for (status, response) in &op.responses.responses {
        let (description, body, headers) = match response {
            RefOr::Ref(r) => {
                let name = r.ref_location.rsplit('/').next().unwrap_or_default();
                let shared = api.components.as_ref().and_then(|c| c.responses.get(name));
                let (what, body, headers) = match shared {
                    Some(RefOr::T(r)) => (inline(&r.description), body_of(r), headers_of(r)),
                    _ => Default::default(),
                };
                (
                    format!("<a href=\"#response-{0}\">{0}</a>: {what}", esc(name)),
                    body,
                    headers,
                )
            }
            RefOr::T(r) => (inline(&r.description), body_of(r), headers_of(r)),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{description}</td><td>{body}</td><td>{headers}</td></tr>",
            esc(status)
        );
    }
    out.push_str("</table>");
}

fn body_of(r: &Response) -> String {
    r.content
        .iter()
        .map(|(media, content)| {
            let kind = content
                .schema
                .as_ref()
                .map(|s| describe(s).0)
                .unwrap_or_default();
            format!("{kind} <span class=\"muted\">{}</span>", esc(media))
        })
        .collect::<Vec<_>>()
        .join("<br>")
}

fn headers_of(r: &Response) -> String {
    r.headers
        .keys()
        .map(|h| format!("<code>{}</code>", esc(h)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn shared_responses(out: &mut String, api: &OpenApi) {
    out.push_str(
        "<h2 id=\"responses\">Shared responses</h2><p>Answers any operation can give; the \
         endpoints above link here.</p>",
    );
    let shared = api.components.iter().flat_map(|c| &c.responses);
    for (name, response) in shared {
        let RefOr::T(r) = response else { continue };
        let _ = write!(
            out,
            "<h3 id=\"response-{0}\">{0}</h3>{1}<table><tr><th>body</th><td>{2}</td></tr>",
            esc(name),
            prose(&r.description),
            if r.content.is_empty() {
                "none".to_owned()
            } else {
                body_of(r)
            },
        );
        for (h, header) in &r.headers {
            let _ = write!(
                out,
                "<tr><th>header <code>{}</code></th><td>{}</td></tr>",
                esc(h),
                inline(header.description.as_deref().unwrap_or_default())
            );
        }
        out.push_str("</table>");
        for content in r.content.values() {
            if let Some(example) = &content.example {
                example_block(out, example);
            }
        }
    }
}

fn schemas(out: &mut String, api: &OpenApi) {
    out.push_str("<h2 id=\"schemas\">Schemas</h2>");
    let all = api.components.iter().flat_map(|c| &c.schemas);
    for (name, schema) in all {
        let _ = write!(out, "<h3 id=\"schema-{0}\">{0}</h3>", esc(name));
        let RefOr::T(schema) = schema else { continue };
        let value = serde_json::to_value(schema).unwrap_or_default();
        if let Some(d) = value.get("description").and_then(Value::as_str) {
            out.push_str(&prose(d));
        }
        match schema {
            Schema::Object(o) if !o.properties.is_empty() => {
                out.push_str(
                    "<table><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr>",
                );
                for (field, property) in &o.properties {
                    let (kind, rules) = describe(property);
                    let description = serde_json::to_value(property)
                        .ok()
                        .and_then(|v| v.get("description").and_then(Value::as_str).map(inline))
                        .unwrap_or_default();
                    let _ = write!(
                        out,
                        "<tr><td><code>{}</code></td><td>{kind}{rules}</td><td>{}</td><td>{description}</td></tr>",
                        esc(field),
                        if o.required.contains(field) { "yes" } else { "no" },
                    );
                }
                out.push_str("</table>");
            }
            _ => {
                let (kind, rules) = describe(&RefOr::T(schema.clone()));
                let _ = write!(out, "<p>Type: {kind}{rules}</p>");
            }
        }
        for example in value
            .get("examples")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            example_block(out, example);
        }
    }
}

fn example_block(out: &mut String, example: &Value) {
    let text = serde_json::to_string_pretty(example).unwrap_or_default();
    let _ = write!(
        out,
        "<p class=\"muted\">Example:</p><pre>{}</pre>",
        esc(&text)
    );
}

/// A schema's type as HTML (with a link for a named schema), and its rules: format,
/// bounds, pattern, allowed values.
fn describe(schema: &RefOr<Schema>) -> (String, String) {
    let value = serde_json::to_value(schema).unwrap_or_default();
    (kind(&value), rules(&value))
}

fn kind(v: &Value) -> String {
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or_default();
        return format!("<a href=\"#schema-{0}\">{0}</a>", esc(name));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(items) = v.get(key).and_then(Value::as_array) {
            return items.iter().map(kind).collect::<Vec<_>>().join(" | ");
        }
    }
    let types: Vec<String> = match v.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any".into();
    }
    types
        .iter()
        .map(|t| match t.as_str() {
            "array" => format!("array of {}", v.get("items").map(kind).unwrap_or_default()),
            other => esc(other),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

fn rules(v: &Value) -> String {
    let mut rules = Vec::new();
    if let Some(f) = v.get("format").and_then(Value::as_str) {
        rules.push(format!("format {}", esc(f)));
    }
    match (v.get("minimum"), v.get("maximum")) {
        (Some(lo), Some(hi)) => rules.push(format!("{lo} to {hi}")),
        (Some(lo), None) => rules.push(format!("at least {lo}")),
        (None, Some(hi)) => rules.push(format!("at most {hi}")),
        (None, None) => {}
    }
    if let Some(p) = v.get("pattern").and_then(Value::as_str) {
        rules.push(format!("pattern <code>{}</code>", esc(p)));
    }
    if let Some(values) = v.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values
            .iter()
            .map(|e| format!("<code>{}</code>", esc(e.as_str().unwrap_or_default())))
            .collect();
        rules.push(format!("one of {}", listed.join(", ")));
    }
    if rules.is_empty() {
        String::new()
    } else {
        format!("<br><span class=\"muted\">{}</span>", rules.join("; "))
    }
}

/// Paragraphs and `- ` bullet lists of a description, as HTML.
fn prose(text: &str) -> String {
    let mut out = String::new();
    for block in text.split("\n\n") {
        let block = block.trim();
        if block.is_empty() {
            continue;
        }
        if block.starts_with("- ") {
            out.push_str("<ul>");
            for item in block.split("\n- ") {
                let _ = write!(out, "<li>{}</li>", inline(item.trim_start_matches("- ")));
            }
            out.push_str("</ul>");
        } else {
            let _ = write!(out, "<p>{}</p>", inline(block));
        }
    }
    out
}

/// One line of a description: escaped, with `code` spans.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}
