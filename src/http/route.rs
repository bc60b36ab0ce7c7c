//! The route table's machinery. An endpoint is one [`Route`]: its path template, its
//! handler, whose typed parameters say what a request must carry and how each is checked,
//! and its OpenAPI operation. A path is matched by walking the templates along it, without
//! a router's per-request work (a route service cloned, parameters stored in the request
//! and deserialised back out of it); every path no row matches (the WebSocket, the OpenAPI
//! document, unknown paths) goes on to the axum router.

use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;

use axum::response::Response;
use percent_encoding::percent_decode_str;
use utoipa::openapi::{RefOr, Schema};
use utoipa::ToSchema;

use super::error::ApiError;
use super::query::{Query, MIN_SEQ};
use super::state::AppState;

/// One endpoint: everything about it, declared once.
pub struct Route {
    /// The path template as the OpenAPI document writes it (`/api/v1/horses/{horse_no}`):
    /// each `{name}` is a parameter of the handler, in the same order, and takes a whole
    /// segment. It is also the route's `route` label in the metrics.
    pub path: &'static str,
    /// The handler, called with its parameters checked.
    pub handler: &'static (dyn Handle + Sync),
    /// Where its requests are answered: those whose work can grow with the data rather
    /// than with their answer on a long reads' thread (`long.rs`), as is every request
    /// with `as_of` whose answer was not given lately, but a profile's and results'
    /// (a record's versions for each, `DocKey::as_of_is_bounded`).
    pub runs: Runs,
    /// Its operation in the OpenAPI document (the parameters are the handler's).
    pub doc: Operation,
}

/// Where a route's requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// On the thread that took the request: its work grows with its answer alone.
    Inline,
    /// On a long reads' thread, below the short reads and within the request's deadline:
    /// its work can grow with the data (a search, a page of odds history).
    Apart,
    /// As `Apart`, but inline where the answer is held in memory (records by condition
    /// asked before): the handler answers [`super::error::ApiError::NotRemembered`] on a short
    /// reads' thread when it would have to work it out, and the request is then handed
    /// to a long reads' thread.
    ApartUnlessRemembered,
}

/// A route's operation in the OpenAPI document.
pub struct Operation {
    /// The `operationId`: the handler's name.
    pub id: &'static str,
    /// The tag it is listed under.
    pub tag: &'static str,
    /// One line.
    pub summary: &'static str,
    /// What it answers, in full.
    pub description: &'static str,
    /// What a 200 answers.
    pub ok: &'static str,
    /// The schema of a 200's body.
    pub body: Component,
    /// The errors particular to this route, `(status, what it means here)`, each with the
    /// error body; those any route can give are added to every operation.
    pub errors: &'static [(&'static str, &'static str)],
}

/// A named schema of the OpenAPI document's components.
#[derive(Clone, Copy)]
pub struct Component {
    /// Its name.
    pub name: fn() -> Cow<'static, str>,
    /// Adds it, and every schema it refers to, to a list of components.
    pub collect: fn(&mut Vec<(String, RefOr<Schema>)>),
}

impl Component {
    /// The schema of `T`.
    pub const fn of<T: ToSchema>() -> Component {
        Component {
            name: T::name,
            collect: collect::<T>,
        }
    }
}

fn collect<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

impl Route {
    /// A path of this route with each parameter's example in its place.
    /// Required query parameters follow, with their examples.
    pub fn example(&self) -> String {
        let mut path = self.path.to_owned();
        let mut query = Vec::new();
        for p in self.handler.params() {
            match p.place {
                In::Path => path = path.replace(&format!("{{{}}}", p.name), p.example),
                In::Query if p.required => query.push(format!("{}={}", p.name, p.example)),
                In::Query => {}
            }
        }
        if !query.is_empty() {
            path = format!("{path}?{}", query.join("&"));
        }
        path
    }
}

// ---- Parameters ----

/// Where a request carries a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    /// A `{name}` segment of the path.
    Path,
    /// A query parameter.
    Query,
}

/// A value that a request carries, checked: the type of a handler's parameter. A path
/// parameter is taken as the type itself; a query parameter as `Option` of it, or as the
/// type itself where a request must carry it (a 400 names it when missing).
pub trait Param: Sized {
    /// Its name: the `{name}` of the template, or the query parameter.
    const NAME: &'static str;
    /// Where it is carried.
    const IN: In;
    /// Its description in the OpenAPI document.
    const DOC: &'static str;
    /// A value that passes the check.
    const EXAMPLE: &'static str;
    /// The name of its schema among the OpenAPI document's components.
    const SCHEMA: &'static str;
    /// The value, from the percent-decoded segment or the query parameter's value; one
    /// that fails the check is a 400 that says why.
    fn check(raw: &str) -> Result<Self, ApiError>;
    /// Its schema: what the check accepts.
    fn schema() -> RefOr<Schema>;
}

/// A handler's parameter as the table declares it.
#[derive(Clone, Copy)]
pub struct Declared {
    /// Its name: the `{name}` of the template, or the query parameter.
    pub name: &'static str,
    /// Where it is carried.
    pub place: In,
    /// Whether a request must carry it (every path parameter; a query parameter taken as
    /// itself, not as an `Option`).
    pub required: bool,
    /// Its description in the OpenAPI document.
    pub doc: &'static str,
    /// A value that passes its check.
    pub example: &'static str,
    /// Its schema.
    pub schema: Component,
}

/// A handler's parameter: a [`Param`] of the path or a required one of the query, or an
/// `Option` of one of the query.
pub trait Arg: Sized {
    /// The query parameter's name; `None` for a path parameter.
    const QUERY: Option<&'static str>;
    /// Takes it from the request, checked.
    fn take(input: &mut Input<'_>) -> Result<Self, ApiError>;
    /// How the table declares it.
    fn declared() -> Declared;
}

impl<T: Param> Arg for T {
    const QUERY: Option<&'static str> = match T::IN {
        In::Path => None,
        In::Query => Some(T::NAME),
    };

    fn take(input: &mut Input<'_>) -> Result<Self, ApiError> {
        match T::IN {
            In::Path => {
                let raw = input.path.next().ok_or_else(|| {
                    ApiError::Internal(anyhow::anyhow!("no segment for `{}`", T::NAME))
                })?;
                T::check(&param(raw, T::NAME)?)
            }
            In::Query => match input.query()?.remove(T::NAME) {
                Some(v) => T::check(&v),
                None => Err(ApiError::BadRequest(format!(
                    "query parameter `{}` is required: {}",
                    T::NAME,
                    T::DOC
                ))),
            },
        }
    }

    fn declared() -> Declared {
        declared::<T>(true)
    }
}

impl<T: Param> Arg for Option<T> {
    const QUERY: Option<&'static str> = {
        assert!(
            matches!(T::IN, In::Query),
            "a path parameter is never optional"
        );
        Some(T::NAME)
    };

    fn take(input: &mut Input<'_>) -> Result<Self, ApiError> {
        input
            .query()?
            .remove(T::NAME)
            .map(|v| T::check(&v))
            .transpose()
    }

    fn declared() -> Declared {
        declared::<T>(false)
    }
}

fn declared<T: Param>(required: bool) -> Declared {
    Declared {
        name: T::NAME,
        place: T::IN,
        required,
        doc: T::DOC,
        example: T::EXAMPLE,
        schema: Component {
            name: || Cow::Borrowed(T::SCHEMA),
            collect: |schemas| schemas.push((T::SCHEMA.to_owned(), T::schema())),
        },
    }
}

/// What a matched request carries, taken parameter by parameter in the handler's order:
/// the path's, then the query's, parsed once with the handler's query parameters allowed.
pub struct Input<'a> {
    path: std::slice::Iter<'a, &'a str>,
    raw_query: Option<&'a str>,
    allowed: &'a [&'static str],
    query: Option<HashMap<String, String>>,
}

impl Input<'_> {
    /// The query parameters not yet taken, parsed on first use: an unknown or repeated
    /// one is a 400.
    fn query(&mut self) -> Result<&mut HashMap<String, String>, ApiError> {
        if self.query.is_none() {
            self.query = Some(Query::parse(self.raw_query, self.allowed)?.0);
        }
        Ok(self.query.get_or_insert_default())
    }
}

/// A path parameter, percent-decoded; one that does not decode to UTF-8 is a 400.
pub fn param<'a>(raw: &'a str, name: &str) -> Result<Cow<'a, str>, ApiError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| ApiError::BadRequest(format!("malformed path: invalid UTF-8 in `{name}`")))
}

// ---- Handlers ----

/// A handler as the table holds it, the types of its parameters erased.
pub trait Handle {
    /// Checks the parameters, then answers: see [`Handle::check`].
    fn answer(
        &self,
        state: &AppState,
        path: &[&str],
        query: Option<&str>,
    ) -> Result<Response, ApiError>;

    /// Checks the parameters in the handler's order: the path's (`path`, percent-encoded
    /// as they came), then the query's; a query parameter the handler does not take is a
    /// 400. The first that fails is the error.
    fn check(&self, path: &[&str], query: Option<&str>) -> Result<(), ApiError>;

    /// Its parameters, in order.
    fn params(&self) -> Vec<Declared>;
}

/// A handler fn, `fn(&AppState, A, B, ...) -> Result<Response, ApiError>` where each
/// parameter is an [`Arg`], made a [`Handle`] for a table row.
pub struct Handler<F, P> {
    f: F,
    params: PhantomData<fn(P)>,
}

/// Implemented by a handler fn taking the parameters `P` (a tuple), whatever its arity.
pub trait Takes<P> {}

impl<F, P> Handler<F, P> {
    /// The row's handler `f`.
    pub const fn new(f: F) -> Self
    where
        F: Takes<P>,
    {
        Handler {
            f,
            params: PhantomData,
        }
    }
}

/// [`Handle`] for the handler fns of each arity.
macro_rules! arity {
    ($($arg:ident),*) => {
        impl<F, $($arg: Arg),*> Takes<($($arg,)*)> for F
        where
            F: Fn(&AppState, $($arg),*) -> Result<Response, ApiError>,
        {
        }

        impl<F, $($arg: Arg),*> Handler<F, ($($arg,)*)> {
            #[allow(non_snake_case, unused_mut)]
            fn take(path: &[&str], query: Option<&str>) -> Result<($($arg,)*), ApiError> {
                // The handler's own, then `min_seq`, which every read takes (the
                // pipeline has checked it and waited for its position).
                let names: &[Option<&'static str>] = &[$($arg::QUERY,)* Some(MIN_SEQ)];
                let mut allowed = [""; MAX_QUERY + 1];
                let mut n = 0;
                for (slot, name) in allowed.iter_mut().zip(names.iter().flatten()) {
                    *slot = name;
                    n += 1;
                }
                let mut input = Input {
                    path: path.iter(),
                    raw_query: query,
                    allowed: allowed.get(..n).unwrap_or_default(),
                    query: None,
                };
                $(let $arg = $arg::take(&mut input)?;)*
                // A query parameter the handler does not take is a 400, even where it
                // takes none.
                input.query()?;
                Ok(($($arg,)*))
            }
        }

        impl<F, $($arg: Arg),*> Handle for Handler<F, ($($arg,)*)>
        where
            F: Fn(&AppState, $($arg),*) -> Result<Response, ApiError>,
        {
            #[allow(non_snake_case)]
            fn answer(
                &self,
                state: &AppState,
                path: &[&str],
                query: Option<&str>,
            ) -> Result<Response, ApiError> {
                let ($($arg,)*) = Self::take(path, query)?;
                (self.f)(state, $($arg),*)
            }

            fn check(&self, path: &[&str], query: Option<&str>) -> Result<(), ApiError> {
                Self::take(path, query).map(drop)
            }

            fn params(&self) -> Vec<Declared> {
                vec![$($arg::declared()),*]
            }
        }
    };
}

arity!();
arity!(A);
arity!(A, B);
arity!(A, B, C);
arity!(A, B, C, D);
arity!(A, B, C, D, E);

/// Most query parameters a handler takes.
pub(super) const MAX_QUERY: usize = 4;
