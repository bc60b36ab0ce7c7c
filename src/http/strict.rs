//! A JSON value checked against a schema of one of the service's descriptions (the
//! OpenAPI document or the AsyncAPI one), strictly: on top of what the schema says, a
//! property the schema does not name is an error, so a field added to a document or a
//! frame without its schema fails the tests that meet it. It reads the subset of JSON
//! Schema that utoipa writes for the service's types.

use std::collections::BTreeSet;

use racing_events::Date;
use serde_json::Value;

/// Checks values against the schemas of one description, recording each
/// `Schema.property` met (and `Schema.property=null` when it was null).
pub struct Validator<'a> {
    description: &'a Value,
    /// Every `Schema.property` met so far, and `Schema.property=null` for each met null.
    pub seen: BTreeSet<String>,
    /// The mark of what an example leaves out, where elisions are allowed.
    elision: Option<&'a str>,
}

impl<'a> Validator<'a> {
    /// A validator of the schemas under `components.schemas` of `description`.
    pub fn new(description: &'a Value) -> Validator<'a> {
        Validator {
            description,
            seen: BTreeSet::new(),
            elision: None,
        }
    }

    /// The same, for a written example that leaves parts out, each written `elision`:
    /// an array item or a property's value that is that string is not checked, and an
    /// object holding a property of that name (its other members left out) is checked
    /// without its `required` list. Everything written is checked as strictly as ever.
    pub fn with_elisions(description: &'a Value, elision: &'a str) -> Validator<'a> {
        Validator {
            elision: Some(elision),
            ..Validator::new(description)
        }
    }

    fn elided(&self, v: &Value) -> bool {
        self.elision.is_some_and(|e| v.as_str() == Some(e))
    }

    /// The schema a `$ref` (`#/components/schemas/NAME`) names, with its name.
    pub fn component(&self, reference: &str) -> Result<(String, &'a Value), String> {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .ok_or_else(|| format!("unexpected $ref {reference}"))?;
        let description: &'a Value = self.description;
        let schema = &description["components"]["schemas"][name];
        if !schema.is_object() {
            return Err(format!("no schema {name}"));
        }
        Ok((name.to_owned(), schema))
    }

    /// Checks `v`, found at `at`, against `schema`, a schema of (or inside) the one
    /// named `owner`.
    pub fn check(
        &mut self,
        owner: &str,
        schema: &Value,
        v: &Value,
        at: &str,
    ) -> Result<(), String> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let (name, schema) = self.component(r)?;
            return self.check(&name, schema, v, at);
        }
        if let Some(options) = schema.get("oneOf").and_then(Value::as_array) {
            let matching = options
                .iter()
                .filter(|o| self.check(owner, o, v, at).is_ok())
                .count();
            return (matching == 1)
                .then_some(())
                .ok_or(format!("{at}: {matching} of oneOf match"));
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return Err(format!("{at}: schema without a type: {schema}")),
        };
        let actual = match v {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let fits = types.contains(&actual) || (actual == "integer" && types.contains(&"number"));
        if !fits {
            return Err(format!("{at}: {v} is {actual}, schema says {types:?}"));
        }
        if let (Some(n), Some(lo)) = (v.as_f64(), schema["minimum"].as_f64()) {
            if n < lo {
                return Err(format!("{at}: {n} below minimum {lo}"));
            }
        }
        if let (Some(n), Some(hi)) = (v.as_f64(), schema["maximum"].as_f64()) {
            if n > hi {
                return Err(format!("{at}: {n} above maximum {hi}"));
            }
        }
        if let Some(values) = schema["enum"].as_array() {
            if !values.contains(v) {
                return Err(format!("{at}: {v} not in {values:?}"));
            }
        }
        if let Some(s) = v.as_str() {
            if schema["format"] == "date" && Date::parse(s).is_none() {
                return Err(format!("{at}: {s} is not a date"));
            }
            if schema["format"] == "date-time" && s.parse::<jiff::Timestamp>().is_err() {
                return Err(format!("{at}: {s} is not an RFC 3339 time"));
            }
            // The one way the service writes an instant (its pattern): UTC, `Z`, milliseconds.
            if schema["pattern"] == racing_events::Instant::PATTERN
                && racing_events::Instant::of(s).as_deref() != Some(s)
            {
                return Err(format!(
                    "{at}: {s} is not an instant in UTC to the millisecond"
                ));
            }
        }
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if !self.elided(item) {
                        self.check(owner, &schema["items"], item, &format!("{at}[{i}]"))?;
                    }
                }
            }
            Value::Object(fields) => {
                let properties = schema["properties"].as_object();
                let partial = self.elision.is_some_and(|e| fields.contains_key(e));
                for required in schema["required"].as_array().into_iter().flatten() {
                    let name = required.as_str().unwrap_or_default();
                    if !fields.contains_key(name) && !partial {
                        return Err(format!("{at}: required `{name}` missing"));
                    }
                }
                for (name, value) in fields {
                    if self.elision == Some(name.as_str()) {
                        continue;
                    }
                    let Some(property) = properties.and_then(|p| p.get(name)) else {
                        return Err(format!("{at}: `{name}` is not in the {owner} schema"));
                    };
                    self.seen.insert(format!("{owner}.{name}"));
                    if value.is_null() {
                        self.seen.insert(format!("{owner}.{name}=null"));
                    }
                    if !self.elided(value) {
                        self.check(owner, property, value, &format!("{at}.{name}"))?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}
