//! The row of the change feed.

use crate::http::history::{self, ChangesPage};
use crate::http::route::{Component, Handler, Operation, Route, Runs};

/// The change feed's rows, in the order the OpenAPI document lists them.
pub(super) static CHANGES: &[Route] = &[Route {
    path: "/api/v1/changes",
    handler: &Handler::new(history::changes),
    runs: Runs::Inline,
    doc: Operation {
        id: "changes",
        tag: "changes",
        summary: "Documents changed since a point of the log",
        description: "Every document that changed (or went) after `since`, in `seq` order: \
                `path` is the API path that now answers differently. One loop keeps a copy in \
                sync: read a page, GET each path (with `as_of` = its `seq`, or without), pass \
                `next` as `since`; at the end (`next` null) poll again later with the last \
                `seq` or the answer's `Racing-Seq`. Each `seq` is the position of the event \
                that changed the document, whatever path built the store (live or a \
                replay); one event may change several documents; a page holds at \
                most `limit` changes, and where it ends inside one `seq`'s changes its `next` \
                is `\"SEQ.N\"` (after the first N of them), to pass as `since` as it is. \
                Reads the changes it returns and no others. Followed from 0 it names every \
                document there is.",
        ok: "A page of the change feed.",
        body: Component::of::<ChangesPage>(),
        errors: &[(
            "400",
            "`bad_request`: a `since` that is not a stream sequence or a page's `next`, \
                 a `limit` not from 1 to 10000, or another query parameter.",
        )],
    },
}];
