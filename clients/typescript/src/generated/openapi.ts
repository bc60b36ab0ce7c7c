// Generated from the service's /openapi.json by tools/generate.mjs;
// do not edit: run `npm run generate` after a document changes in Rust.
// test/types.test.mjs holds this file equal to what the service serves.

export interface paths {
    "/api/v1/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Index of the API
         * @description Links to everything else: the HTML reference (`/docs`), the OpenAPI and AsyncAPI descriptions (`/openapi.json`, `/asyncapi.json`), the live odds socket, the pricing page, and each family of endpoints with their path templates, summaries and sections of the reference. Also answered at `/api/v1`. It holds no data, but takes the key like every path under `/api/v1`; the reference it links to needs none. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["api_index"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/meetings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Meetings of a range of dates
         * @description Every meeting from `from` to `to` (both included) with a card or a result, by date, then venue: `races` counts the races known for it (with a card or a result), `card` says whether its race card exists, `results` how many results it has. Without `from`, 30 days before today; without `to`, 14 days after, today being the date in the service's time zone (`RACING_TIMEZONE`). A page covers at most 366 days: for a longer range, `to` in the answer is the page's last date and `next` the first date after it with a meeting, to ask again with as `from` (and the same `to`); `next` is `null` on the last page. A `from` after `to` is a range of no dates: no meetings. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["meetings"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/horses": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Find horses by name
         * @description Horses whose name contains `name` (required), whatever the case: those with a name that starts with it first, then alphabetical. Names come from profiles, cards and results, so a horse without a profile is found too; a horse that was renamed is found by each name and listed under its newest (its latest profile's, or its latest-dated card's or result's, whichever came last). At most `limit` (default 20). With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["horse_search"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/horses/{horse_no}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get horse profile
         * @description The profile of a horse by its brand number: its origin, colour, sex and age, trainer and owner, career stakes, starts, wins and places, then its pedigree, import type, ratings and season stakes where the feed gave them. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["horse_profile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/horses/{horse_no}/form": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get horse form
         * @description Every recorded race of the horse, newest first (date, then race number, descending); `limit` keeps the newest N. A horse has form as soon as it appears in a result, even without a profile; its `horse_name` then comes from its latest result. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["horse_form"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/horses/{horse_no}/analysis": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A horse's records by condition
         * @description Runs, wins, places, strike rate and level-stake profit or loss, overall and by venue, distance, going, class and draw, and by jockey and trainer, over the races dated `from` to `to` (both included; by default every race; a `from` after `to` is a range of no dates, which counts no run), worked out from the results when asked for (`docs/api.md`, Records by condition). A run is a runner in a result except one withdrawn or that took no part; `level_stake` is the profit or loss of a 1-unit win bet on each run with recorded win odds. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["horse_analysis"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/results/{date}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List results by date
         * @description All races of the date (or of the `venue`'s meeting), ascending race number; in each, placed runners by position, then the rest as the feed listed them. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["results_by_date"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/results/{date}/{race_number}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get single race result
         * @description The result of one race: `{date, venue, race_number, race_name, distance, going, runners}`, runners placed by position, then the rest; with `venue`, that venue's race of the number. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["race_result"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/racecards/today": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Today's race card
         * @description The card of today's meeting, where today is the calendar date in the service's time zone (`RACING_TIMEZONE`, by default `Asia/Hong_Kong`); the `date` field says which day that was; with `venue`, that venue's meeting. Scratched runners are removed. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["racecard_today"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/racecards/{date}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Race card by date
         * @description The card of the date (or of the `venue`'s meeting), ascending race number, scratched runners removed. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["racecard_by_date"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/odds/{date}/{race_number}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Current odds and market of a race
         * @description The current win and place odds of a race, for clients that poll: every runner with a price, in horse-number order, with its implied probabilities and moves, the race's `market` (books, favourites, steamers and drifters), and `seq`, the stream sequence of the race's latest odds update (a WebSocket `subscribe` with `since` resumes from it). A `venue`'s race has the odds given for it and those a feeder gave without a venue (for the race of that number at every venue), each runner at its latest price; `venue` is null where no venue of the race is known yet. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["race_odds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/odds/{date}/{race_number}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Odds history of a race
         * @description Every odds update of the race in the order it went live, a page at a time: the moves after `since`, at most `limit`, each with its stream `seq`, `published_at` (when the log stored it), `occurred_at` (when its prices were given at their source) and the runners it priced, as the WebSocket sent it. With `venue`, that venue's moves and those given without a venue; without, every move of the race number (each says its `venue`). Pass `next` as `since` for the following page; `null` at the end. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["odds_history"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jockeys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List jockeys
         * @description Every jockey with a ride in a result, by name: `id` (the slug of the name, for `/api/v1/jockeys/{id}`), `name` (as the newest result gives it) and `rides`. With `name`, only those whose name contains it, whatever the case. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["jockeys"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jockeys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a jockey's record
         * @description A jockey's rides, wins, seconds and thirds, overall (with percentages of rides, one decimal place) and by Hong Kong season (September to August, newest first), and the 20 newest rides. A ride is a runner in a result except one withdrawn (`WV`, `WV-A`, `WX`, `WX-A`, `WXNR`) or that took no part (`TNP`); an amended result counts as amended, a retracted one not at all. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["jockey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/jockeys/{id}/analysis": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A jockey's records by condition
         * @description Runs, wins, places, strike rate and level-stake profit or loss, overall and by venue, distance, going, class and draw, and by trainer (each jockey-trainer combination), over the races dated `from` to `to` (both included; by default every race; a `from` after `to` is a range of no dates, which counts no run), worked out from the results when asked for (`docs/api.md`, Records by condition). A run is a runner in a result except one withdrawn or that took no part; `level_stake` is the profit or loss of a 1-unit win bet on each run with recorded win odds. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["jockey_analysis"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/trainers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List trainers
         * @description Every trainer with a runner that rode in a result, by name: `id`, `name` and `rides`, as for jockeys. With `name`, only those whose name contains it, whatever the case. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["trainers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/trainers/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a trainer's record
         * @description A trainer's runners that rode (rides), wins, seconds and thirds, overall and by season, and the 20 newest, as a jockey's record. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["trainer"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/trainers/{id}/analysis": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A trainer's records by condition
         * @description Runs, wins, places, strike rate and level-stake profit or loss, overall and by venue, distance, going, class and draw, and by jockey (each jockey-trainer combination), over the races dated `from` to `to` (both included; by default every race; a `from` after `to` is a range of no dates, which counts no run), worked out from the results when asked for (`docs/api.md`, Records by condition). A run is a runner in a result except one withdrawn or that took no part; `level_stake` is the profit or loss of a 1-unit win bet on each run with recorded win odds. With `as_of`, as the log up to that point would have answered. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["trainer_analysis"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Documents changed since a point of the log
         * @description Every document that changed (or went) after `since`, in `seq` order: `path` is the API path that now answers differently. One loop keeps a copy in sync: read a page, GET each path (with `as_of` = its `seq`, or without), pass `next` as `since`; at the end (`next` null) poll again later with the last `seq` or the answer's `Racing-Seq`. Each `seq` is the position of the event that changed the document, whatever path built the store (live or a replay); one event may change several documents; a page holds at most `limit` changes, and where it ends inside one `seq`'s changes its `next` is `"SEQ.N"` (after the first N of them), to pass as `since` as it is. Reads the changes it returns and no others. Followed from 0 it names every document there is. With `min_seq` (or the header `Racing-Min-Seq`), answered only once the read models hold the log up to that stream sequence: waited for up to a limit (2 s by default), then a 503 with the checkpoint they hold.
         */
        get: operations["changes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ws/live/odds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live odds (WebSocket)
         * @description A WebSocket upgrade (`GET` with `Connection: Upgrade`, `Upgrade: websocket`); any other request is a 400. The key goes in `X-API-Key` or as the query parameter `api_key` (the only query parameter taken); a missing or wrong key gets the 401 and no upgrade. Too many open connections for the key (100 by default) is a 429; an upgrade while the read models are still being built at start-up is a 503.
         *
         *     All frames are JSON text with a `type`; each is described, with its schema, by the AsyncAPI 3.0 document at `/asyncapi.json`. On connect the server sends `{"type":"welcome","seq":S,"heartbeat_ms":H}` (S: the latest position relayed) and the connection starts subscribed to every race.
         *
         *     Client messages:
         *
         *     - `{"type":"subscribe","date":D,"race_number":N}`: `race_number` optional (the whole meeting). The first subscribe replaces the starting everything-subscription; later ones add. Without `since` it is answered by a `snapshot` of each race it names; with `"since": SEQ` it replays every odds update after SEQ for what it names, then goes on live, with no gap and no duplicate. Live updates wait up to 250 ms after connecting for the first client message, so send a resume at once: a `since` older than an `odds` frame already sent on the connection, past the latest update, or more than 100,000 updates back is answered with a `snapshot` instead.
         *     - Optional `"topics"` on `subscribe`: any of `odds` (the default), `status`, `scratchings`, `results`, `cards`. The race-day topics send `status`, `scratching`, `result`, `card` and `retraction` frames, each with its event's `seq` and `published_at`, in stream order with the odds frames; `since` resumes them too, and they are never conflated away.
         *     - `{"type":"unsubscribe","date":D,"race_number":N}`: the same fields (with `topics`, only those stop).
         *     - `{"type":"ping"}`: answered by `{"type":"pong"}`.
         *     - `{"type":"replay","date":D,"race_number":N,"speed":X}`: plays back the date's recorded odds (of one race if `race_number` is given) as `odds` frames exactly as they went live, original `seq`, `published_at` and `occurred_at` included, marked `"replay":true`; each next one the gap between the two moves' `occurred_at` (when their prices were given, not when the log stored them) divided by `speed` after the one before (a number from 1 to 100, fractions allowed, default 1; long gaps stay long: a meeting at speed 1 lasts as long as it did), then `replay_end`. It plays what was recorded up to the latest update when asked; a date without odds ends at once. Subscriptions carry on meanwhile and live frames keep their own order; replay frames are outside it. One replay at a time per connection (`replay_running`); a replay waits for a client that does not read, never dropped or conflated, and takes at most half of the frames waiting for the connection, so live frames are never held up.
         *     - `{"type":"replay_stop"}`: ends the replay under way (its `replay_end` has `"stopped":true`; `not_replaying` if none).
         *
         *     Server messages:
         *
         *     - `snapshot {date, venue, race_number, seq, status?, status_at?, status_reason?, odds: [{horse_no, win_odds?, place_odds?}]}`: the `RaceOdds` document with a `type` in front, one for each venue that runs the race (`venue` null where none is known yet); before any delta for that race.
         *     - `odds {date, venue, race_number, seq, published_at, occurred_at, odds}`: one per odds update; `seq` is its stream sequence, strictly increasing on a connection (among live frames; a replay's carry `"replay":true`); `published_at` is when the log stored it, `occurred_at` when its prices were given at their source (the event's, as the feeder wrote it); `odds` lists only the changed prices; `venue` is the update's, null for one a feeder gave without a venue, which is for the race of that number at every venue of the date.
         *     - `heartbeat {seq}` after `heartbeat_ms` without other traffic.
         *     - `replay_end {date, race_number, moves, stopped}`: a replay is over after `moves` frames (`race_number` null for a whole meeting; `stopped` if `replay_stop` ended it).
         *     - `error {error, message}` for a bad client message (`bad_request`, `frame_too_large`, `too_many_subscriptions`, `not_subscribed`, `replay_running`, `not_replaying`, `rate_limited`); the connection stays open.
         *
         *     Limits: client frames up to 4 KiB (a frame over 64 KiB closes the connection with 1009), 256 subscriptions per connection. Every client message is a request of the key's plan, charged with its HTTP requests; a `since` that replays odds costs one more per 1,000 moves, however many, owed with its `subscribe` (over the plan: `rate_limited`, the message not acted on). A read of the read models that takes longer than the request timeout closes the connection with 1013; resume with `since`. A client that falls behind has its pending deltas replaced by one fresh `snapshot` per race (conflation); one that needs this more than 3 times in 60 s is closed with 1008, as is one whose socket takes no frame for 10 s. A connection whose key is revoked or expires is closed with 1008 within 2 s, with the reason `API key revoked` or `API key expired`; when a key's connection cap is lowered below the connections open, the newest beyond it are closed with 1008 (`connection limit of the API key lowered`). Shutdown closes every socket with 1001.
         */
        get: operations["odds_socket"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/live": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live odds and the race day (Server-Sent Events)
         * @description The live socket's frames as a `text/event-stream`, for the same subscription as one `subscribe`, given as query parameters: `date` (without it, every race's odds), `race_number`, `topics` (comma-separated: `odds`, `status`, `scratchings`, `results`, `cards`, `market`), `since` and `conflate_ms`. Each frame is an event: `event:` its `type`, `data:` the frame as the socket sends it (described in `/asyncapi.json`), and `id:` its `seq` for the frames whose `seq` is a position (`odds`, `snapshot`, and the race day's). A reconnect sends the last id as `Last-Event-ID`, which resumes exactly as the socket's `since` (no gap, no repeat); it wins over `since` in the URL. Heartbeats are comments (`: heartbeat`). A close is an event `close` with the socket's `code` and `reason`. The key may be given as `api_key` (an `EventSource` cannot set headers); the key's plan and its cap on live connections are the socket's, shared with it. See docs/live.md.
         */
        get: operations["live_events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the key's webhook endpoints
         * @description Every endpoint of the key that asks, by id, without their secrets. Takes no query parameters.
         */
        get: operations["webhook_list"];
        put?: never;
        /**
         * Make a webhook endpoint
         * @description Registers a URL to be sent every race-day event of the chosen topics (each as one signed `POST` in the Standard Webhooks form: see the `webhooks` of this document and docs/api.md, Webhooks), from the log's position now on. The URL is checked at once: `https`, and every address its host resolves to public (not loopback, private, link-local, multicast, unspecified or reserved, nor this service); it is checked again at every delivery. Answers the endpoint with its `secret`, shown this once. A key may have as many endpoints as its plan allows.
         */
        post: operations["webhook_create"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a webhook endpoint
         * @description One endpoint of the key's, without its secret: whether it is enabled, and why not. Takes no query parameters.
         */
        get: operations["webhook_read"];
        put?: never;
        post?: never;
        /**
         * Remove a webhook endpoint
         * @description Removes the endpoint and what was owed to it: nothing more is sent. Takes no query parameters.
         */
        delete: operations["webhook_remove"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate a webhook endpoint's secret
         * @description Gives the endpoint a new secret, shown this once. For 24 hours every delivery carries a signature with each, the new one first, so that a receiver changes over whenever it likes; then the old one stops. Takes no query parameters.
         */
        post: operations["webhook_rotate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a webhook endpoint a ping
         * @description Sends the endpoint one `ping` now (`{"type":"ping","seq","published_at","data":{"endpoint","url"}}`), signed as every delivery and under the same rules, enabled or not, and answers what came of it. It is not retried and not listed among the deliveries. Takes no query parameters.
         */
        post: operations["webhook_test"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook endpoint's recent deliveries
         * @description How far the endpoint has been sent, the delivery under way with its next attempt, and the recent attempts, newest first: each with the event's `seq`, its `webhook-id`, the attempt's number, time, status (`delivered`, `failed`, `given_up`), the receiver's status code or the error, and the next attempt's time. Takes no query parameters.
         */
        get: operations["webhook_deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/webhooks/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a webhook endpoint again what passed after a position
         * @description Sends the endpoint every event of its topics after `since` again, in order, each with the `webhook-id` it had (a receiver that keeps them takes each once), then goes on as before; a delivery under way is dropped for it. A disabled endpoint is enabled again. Answered at once; the deliveries follow.
         */
        post: operations["webhook_replay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This OpenAPI 3.1 document
         * @description The description of every endpoint, generated from the service's code. Takes no query parameters.
         */
        get: operations["openapi_json"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This reference as an HTML page
         * @description A self-contained page (no script, no external style or font) rendered from this OpenAPI document. Takes no query parameters.
         */
        get: operations["docs_page"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/asyncapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The AsyncAPI 3.0 document of the live odds WebSocket
         * @description Every frame of `/ws/live/odds`, each with its JSON schema, generated from the types the service serialises. Also served without a key at `/asyncapi.json`. Takes no query parameters.
         */
        get: operations["asyncapi_json"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    raceDayEvent: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A race-day event of the endpoint's topics
         * @description Every status change, scratching, result, card and retraction of the topics an endpoint follows, one `POST` each, in `seq` order, at least once. `data` is the frame the live socket sends for it, byte for byte.
         */
        post: operations["webhook_race_day_event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    ping: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A test of the endpoint
         * @description Sent by `POST /api/v1/webhooks/{id}/test`, once, never retried.
         */
        post: operations["webhook_ping"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /**
         * @description The records of a horse, a jockey or a trainer, as served.
         * @example {
         *       "subject": "jockey",
         *       "id": "z-purton",
         *       "name": "Z Purton",
         *       "from": "2026-09-01",
         *       "to": null,
         *       "overall": {
         *         "runs": 120,
         *         "wins": 30,
         *         "seconds": 19,
         *         "thirds": 14,
         *         "places": 63,
         *         "strike_rate": 25,
         *         "place_rate": 52.5,
         *         "bets": 120,
         *         "level_stake": -8.4
         *       },
         *       "by_venue": [
         *         {
         *           "runs": 80,
         *           "wins": 22,
         *           "seconds": 13,
         *           "thirds": 9,
         *           "places": 44,
         *           "strike_rate": 27.5,
         *           "place_rate": 55,
         *           "bets": 80,
         *           "level_stake": 3.1,
         *           "value": "Sha Tin"
         *         }
         *       ],
         *       "by_distance": [],
         *       "by_going": [],
         *       "by_class": [],
         *       "by_draw": [],
         *       "by_trainer": [
         *         {
         *           "runs": 12,
         *           "wins": 4,
         *           "seconds": 2,
         *           "thirds": 1,
         *           "places": 7,
         *           "strike_rate": 33.3,
         *           "place_rate": 58.3,
         *           "bets": 12,
         *           "level_stake": 6.2,
         *           "value": "C S Shum"
         *         }
         *       ]
         *     }
         */
        Analysis: {
            /** @description `horse`, `jockey` or `trainer`. */
            subject: string;
            /** @description The horse's brand number, or the person's id. */
            id: string;
            /** @description The name as the newest run counted gives it; `null` where none is counted. */
            name: string | null;
            /**
             * Format: date
             * @description The first date counted, as asked; `null`: from the first run.
             */
            from: string | null;
            /**
             * Format: date
             * @description The last date counted, as asked; `null`: to the last run.
             */
            to: string | null;
            /** @description Every run counted. */
            overall: components["schemas"]["Figures"];
            /** @description By racecourse, in name order. */
            by_venue: components["schemas"]["Row"][];
            /** @description By race distance in metres, shortest first. */
            by_distance: components["schemas"]["NumberRow"][];
            /** @description By going, in name order (runs whose result gave none left out). */
            by_going: components["schemas"]["Row"][];
            /** @description By race class, in name order (runs whose result gave none left out). */
            by_class: components["schemas"]["Row"][];
            /** @description By barrier draw, lowest first (runs whose result gave none left out). */
            by_draw: components["schemas"]["NumberRow"][];
            /** @description For a trainer and a horse: by jockey, most runs first, then by name. */
            by_jockey?: components["schemas"]["Row"][];
            /** @description For a jockey and a horse: by trainer, most runs first, then by name. */
            by_trainer?: components["schemas"]["Row"][];
        };
        /** @description One endpoint, as the index lists it. */
        ApiEndpoint: {
            /**
             * @description Its family: the reference's tag (`meetings`, `horses`, `results`, `racecards`,
             *     `odds`, `people`, `changes`).
             */
            family: string;
            /** @description Its path template: each `{name}` is a parameter. */
            path: string;
            /** @description What it answers, in a line. */
            summary: string;
            /** @description Its section of the HTML reference. */
            docs: string;
        };
        /**
         * @description The index of the API.
         * @example {
         *       "about": "horse racing data: profiles and form, results, race cards, odds, jockeys and trainers, and a change feed",
         *       "version": "v1",
         *       "key": "every path under /api/v1, this one included, takes the key in the X-API-Key header; docs, openapi, asyncapi and pricing need none",
         *       "docs": "/docs",
         *       "openapi": "/openapi.json",
         *       "asyncapi": "/asyncapi.json",
         *       "live_odds": "/ws/live/odds",
         *       "pricing": "/pricing",
         *       "endpoints": [
         *         {
         *           "family": "horses",
         *           "path": "/api/v1/horses/{horse_no}",
         *           "summary": "Get horse profile",
         *           "docs": "/docs#op-get--api-v1-horses--horse-no-"
         *         }
         *       ]
         *     }
         */
        ApiIndex: {
            /** @description What the API serves, in a line. */
            about: string;
            /** @description The version every path carries (`/api/v1/`). */
            version: string;
            /** @description Which of these links need the key. */
            key: string;
            /** @description The HTML reference of every endpoint (no key needed). */
            docs: string;
            /** @description The OpenAPI 3.1 description of the HTTP API (no key needed). */
            openapi: string;
            /** @description The AsyncAPI 3.0 description of the live socket (no key needed). */
            asyncapi: string;
            /** @description The live odds WebSocket (the key in `X-API-Key` or as `?api_key=`). */
            live_odds: string;
            /** @description The pricing page, where a key is subscribed for (no key needed). */
            pricing: string;
            /** @description Every endpoint, in the reference's order, which keeps each family's together. */
            endpoints: components["schemas"]["ApiEndpoint"][];
        };
        /**
         * Format: int64
         * @description A stream sequence (as `Racing-Seq`, a change's or an odds move's `seq` give it): an integer from 0 written in digits; anything else is a 400.
         * @example 0
         */
        AsOf: number;
        /**
         * @description The book of a race's market after a move: what the odds document's `market`, every
         *     move of the odds history and every `odds` frame carry.
         */
        Book: {
            /**
             * Format: double
             * @description The win market's book: the sum of the implied probabilities (1 / win odds) of every
             *     runner with a win price that is not scratched, in percent, 2 decimal places. Over
             *     100 by the operator's margin. Left out where no such runner has a win price.
             */
            win_book_pct?: number;
            /**
             * Format: double
             * @description The place market's book: the same sum over place prices. A place bet pays on any
             *     of the first three (two with fewer than seven starters), so a fair place book is
             *     near 300 (200); left out where no runner not scratched has a place price.
             */
            place_book_pct?: number;
            /**
             * @description The runners not scratched with the shortest win price, joint favourites all
             *     listed, in horse number order; empty where no such runner has a win price.
             */
            favourites: string[];
        };
        /** @description A race was declared or its card amended (topic `cards`). */
        CardFrame: {
            /** @description Which message this is. */
            type: "card";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description The event's racecourse; `null` where it gave none. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the event.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the event (RFC 3339).
             */
            published_at: string;
            /** @description The race as the day's card lists it. */
            card: components["schemas"]["CardRace"];
        };
        /** @description One race of a race card. */
        CardRace: {
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /** @description Race name. */
            race_name: string;
            /**
             * Format: int64
             * @description Race distance in metres.
             */
            distance: number;
            /** @description Race class, carried as a string (`Class 4`, `Group 1`, `Griffin`). */
            class: string;
            /** @description The race's status: left out for a race never given one. */
            status?: components["schemas"]["RaceStatus"];
            /**
             * Format: date-time
             * @description When the race took its status (the `occurred_at` of the event that gave it, or of
             *     the result that finished it); left out with `status`.
             */
            status_at?: string;
            /** @description Why, where the feed said; left out where it did not. */
            status_reason?: string;
            /** @description Declared runners, scratched ones removed. */
            runners: components["schemas"]["CardRunner"][];
        };
        /** @description A declared runner of a race card. */
        CardRunner: {
            /** @description Brand number. */
            horse_no: string;
            /** @description Registered name. */
            horse_name: string;
            /** @description Declared jockey. */
            jockey: string;
            /** @description Trainer. */
            trainer: string;
            /**
             * Format: int64
             * @description Barrier draw, 1 to 99.
             */
            draw: number;
            /**
             * Format: int64
             * @description Weight carried, in pounds.
             */
            weight: number;
            /**
             * @description The runner's form as of the race's date: only results of earlier dates count,
             *     whenever they were published (`docs/api.md`, "Form on the card").
             */
            form?: components["schemas"]["RunnerForm"];
        };
        /** @description A document that answers differently from a point of the log on. */
        Change: {
            /**
             * Format: int64
             * @description The stream sequence its change was applied with: a GET of `path` with this
             *     `as_of` answers the document as it then became (404 if it went).
             */
            seq: number;
            /**
             * @description The API path that now answers differently, with its `venue` where it is one
             *     venue's document.
             */
            path: string;
        };
        /**
         * @description A stream sequence (a `Racing-Seq`, a change's `seq`), or a page's `next`: `SEQ.N` stands after the first N changes of the sequence SEQ. Anything else is a 400.
         * @example 0
         * @example 5120.64
         */
        ChangeSince: string;
        /**
         * @description A page of the change feed.
         * @example {
         *       "changes": [
         *         {
         *           "seq": 5120,
         *           "path": "/api/v1/results/2026-11-18/3"
         *         },
         *         {
         *           "seq": 5120,
         *           "path": "/api/v1/horses/K307/form"
         *         },
         *         {
         *           "seq": 5131,
         *           "path": "/api/v1/odds/2026-11-18/4?venue=Happy+Valley"
         *         }
         *       ],
         *       "next": "5131.1"
         *     }
         */
        Changes: {
            /**
             * @description Every document that changed (or went) after `since`, in `seq` order: at most
             *     `limit`.
             */
            changes: components["schemas"]["Change"][];
            next: null | components["schemas"]["Next"];
        };
        /**
         * Format: date
         * @description A real calendar date written `YYYY-MM-DD` (year 1000 or later); anything else is a 400.
         * @example 2026-11-18
         */
        Date: string;
        /**
         * @description The body of every error.
         * @example {
         *       "error": "not_found",
         *       "message": "no horse E999"
         *     }
         */
        ErrorBody: {
            /** @description What went wrong, as a stable code. */
            error: components["schemas"]["ErrorCode"];
            /**
             * @description For people: says which input was wrong or what was looked for; echoes at most 64
             *     characters of client input and never internal details.
             */
            message: string;
            /**
             * Format: int64
             * @description Only on the 503 of a read whose position (`min_seq`, `Racing-Min-Seq`, `as_of`)
             *     the read models had not reached in time: the checkpoint they hold, as the
             *     `Racing-Checkpoint` header also says.
             */
            checkpoint?: number | null;
        };
        /**
         * @description The error codes: `bad_request` (400), `unauthorized` (401), `not_found` (404),
         *     `method_not_allowed` (405), `limit_reached` (409), `body_not_accepted` (413),
         *     `uri_too_long` (414), `rate_limited` (429), `headers_too_large` (431), `internal` (500), `unavailable` (503).
         * @enum {string}
         */
        ErrorCode: "bad_request" | "unauthorized" | "not_found" | "method_not_allowed" | "limit_reached" | "body_not_accepted" | "uri_too_long" | "rate_limited" | "headers_too_large" | "internal" | "unavailable";
        /** @description Runs, wins, seconds, thirds, places and the level-stake profit or loss of some runs. */
        Figures: {
            /**
             * Format: int32
             * @description Races taken part in: withdrawals and `TNP` left out.
             */
            runs: number;
            /**
             * Format: int32
             * @description Of them, won (dead heats for first included).
             */
            wins: number;
            /**
             * Format: int32
             * @description Of them, finished second (dead heats included).
             */
            seconds: number;
            /**
             * Format: int32
             * @description Of them, finished third (dead heats included).
             */
            thirds: number;
            /**
             * Format: int32
             * @description Of them, finished first, second or third: `wins + seconds + thirds`.
             */
            places: number;
            /**
             * Format: double
             * @description Wins in percent of runs, 1 decimal place (0.0 without runs).
             */
            strike_rate: number;
            /**
             * Format: double
             * @description Places in percent of runs, 1 decimal place.
             */
            place_rate: number;
            /**
             * Format: int32
             * @description Runs with recorded win odds: the bets of `level_stake`.
             */
            bets: number;
            /**
             * Format: double
             * @description The profit or loss, in units, of a 1-unit win bet on each of `bets` at its recorded
             *     (decimal) win odds: `win_odds - 1` for a win, `-1` otherwise; 2 decimal places.
             */
            level_stake: number;
        };
        /**
         * @description A horse's form: every recorded race, newest first (date, then race
         *     number, descending).
         * @example {
         *       "horse_no": "E271",
         *       "horse_name": "GOLDEN SIXTY",
         *       "form": [
         *         {
         *           "date": "2026-11-18",
         *           "venue": "Happy Valley",
         *           "race_number": 1,
         *           "distance": 1200,
         *           "position": 1,
         *           "finish_time": "1:09.45",
         *           "win_odds": 3.5,
         *           "jockey": "Z Purton",
         *           "status": null,
         *           "dead_heat": true,
         *           "race_name": "KITE HANDICAP",
         *           "going": "GOOD",
         *           "class": "Class 3",
         *           "trainer": "F C Lor",
         *           "draw": 4,
         *           "actual_weight": 133,
         *           "declared_weight": 1198,
         *           "lbw": "-",
         *           "lbw_lengths": 0,
         *           "running_positions": [
         *             3,
         *             2,
         *             1
         *           ]
         *         }
         *       ]
         *     }
         */
        Form: {
            /** @description Brand number. */
            horse_no: string;
            /**
             * @description Registered name: the profile's, or for a horse without a profile its latest
             *     result's.
             */
            horse_name: string;
            /** @description The horse's races, newest first; `limit` keeps the newest N. */
            form: components["schemas"]["FormEntry"][];
        };
        /**
         * @description One race of a horse's form: the race and the horse's run in it (with `status` and
         *     `dead_heat`, then the race's name, going and class and the runner's trainer and record where known: a field
         *     the feed did not give is left out).
         */
        FormEntry: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse, e.g. `Sha Tin`. */
            venue: string;
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Race distance in metres.
             */
            distance: number;
            /**
             * Format: int64
             * @description Finishing position from 1 (shared in a dead heat); `null` for no placing.
             */
            position: number | null;
            /**
             * @description Finishing time, `m:ss.cc` (minutes, seconds, hundredths); `null` where there is
             *     none.
             */
            finish_time: string | null;
            /**
             * Format: double
             * @description Final decimal win odds, stake included (at least 1.0); `null` where there are none.
             */
            win_odds: number | null;
            /** @description Jockey who rode. */
            jockey: string;
            /**
             * @description `null` for a normal finisher, otherwise the official code of a non-finisher or
             *     withdrawal, e.g. `PU` (pulled up), `WV-A`.
             */
            status: string | null;
            /** @description Whether the position is shared with another runner. */
            dead_heat: boolean;
            /** @description Race name, e.g. `KITE HANDICAP`. */
            race_name: string;
            /** @description Track condition, e.g. `GOOD`, `GOOD TO FIRM`. */
            going: string;
            /** @description Race class, e.g. `Class 4`, `Group 1`; left out where the result gave none. */
            class?: string;
            /** @description Trainer of the runner in this race. */
            trainer: string;
            /**
             * Format: int64
             * @description Barrier draw, 1 to 99. Left out where the feed did not give it.
             */
            draw?: number;
            /**
             * Format: int64
             * @description Weight carried, in pounds (90 to 160). Left out where the feed did not give it.
             */
            actual_weight?: number;
            /**
             * Format: int64
             * @description The horse's own body weight declared before the race, in pounds (700 to 1500).
             *     Left out where the feed did not give it.
             */
            declared_weight?: number;
            /**
             * @description Lengths behind the winner as officially written: `-` for the winner, `NOSE`, `SH`
             *     (short head), `HD` (head), `N` (neck), lengths with an optional fraction (`3/4`,
             *     `1-1/4`, `10-3/4`), or a code with no margin (`ML`, `DIST`, `---`). Left out where the feed did not give it.
             */
            lbw?: string;
            /**
             * Format: double
             * @description `lbw` as a number of lengths behind the winner: `-` is 0, `1-1/4` is 1.25; `NOSE`,
             *     `SH`, `HD`, `N` are 0.05, 0.1, 0.2, 0.3. `null` where `lbw` is no number of lengths
             *     (`ML`, `DIST`, `---`). Present exactly when `lbw` is.
             */
            lbw_lengths?: number | null;
            /**
             * @description The runner's position at each call of the race, in order (1 to 6 positions of 1 to
             *     99); the last is at the finish. Left out where the feed did not give it.
             */
            running_positions?: number[];
        };
        /**
         * @description Keep only the newest N entries: an integer from 1 to 1000 written in digits; anything else is a 400.
         * @example 5
         */
        FormLimit: number;
        /**
         * Format: date
         * @description The first date of the range: a real calendar date written `YYYY-MM-DD`; anything else is a 400.
         * @example 2026-11-01
         */
        FromDate: string;
        /** @description A runner's record on one going. */
        GoingRecord: {
            /** @description The going, as results give it (`GOOD`, `GOOD TO FIRM`). */
            going: string;
            /**
             * Format: int32
             * @description Races taken part in on it.
             */
            runs: number;
            /**
             * Format: int32
             * @description Of them, won.
             */
            wins: number;
            /**
             * Format: int32
             * @description Of them, first, second or third.
             */
            places: number;
        };
        /** @description A horse a search found. */
        HorseMatch: {
            /** @description Brand number: `/api/v1/horses/{horse_no}` and its form. */
            horse_no: string;
            /**
             * @description Its newest name: its latest profile's, or its latest-dated card's or result's,
             *     whichever came later.
             */
            horse_name: string;
        };
        /**
         * @description Horse (brand) number: 1 to 32 of `A-Z a-z 0-9 _ -`, starting with a letter or digit; anything else is a 400.
         * @example E271
         */
        HorseNo: string;
        /**
         * @description The horses a search found.
         * @example {
         *       "horses": [
         *         {
         *           "horse_no": "E271",
         *           "horse_name": "GOLDEN SIXTY"
         *         }
         *       ]
         *     }
         */
        HorseSearch: {
            /**
             * @description Horses with a name that contains the text: those with a name that starts with it
             *     first, then alphabetical by name.
             */
            horses: components["schemas"]["HorseMatch"][];
        };
        /**
         * @description Every jockey, by name.
         * @example {
         *       "jockeys": [
         *         {
         *           "id": "h-bowman",
         *           "name": "H Bowman",
         *           "rides": 380
         *         },
         *         {
         *           "id": "z-purton",
         *           "name": "Z Purton",
         *           "rides": 412
         *         }
         *       ]
         *     }
         */
        JockeyList: {
            /** @description Every jockey with a ride, by name (then id). */
            jockeys: components["schemas"]["PersonRow"][];
        };
        /** @description The market of a race's current prices (`docs/api.md`, "The market"). */
        Market: {
            /**
             * Format: date-time
             * @description The market's clock: the latest `occurred_at` of the race's price moves (when the
             *     prices were given at their source), in UTC. The moves over 5 and 15 minutes are
             *     read back from it. Left out where no move gave a win price.
             */
            clock?: string;
            /**
             * Format: double
             * @description The win book: the sum of 1 / win odds over every runner with a win price that is
             *     not scratched, in percent, 2 decimal places (over 100 by the operator's margin);
             *     left out where no such runner has a win price.
             */
            win_book_pct?: number;
            /**
             * Format: double
             * @description The place book, the same over place prices; left out where no runner not
             *     scratched has one.
             */
            place_book_pct?: number;
            /** @description The runners not scratched with the shortest win price, joint favourites all listed. */
            favourites: string[];
            /**
             * @description Steamers: the runners not scratched whose win price shortened most over the last
             *     15 minutes of the clock (by `win_move_15m_pct`), at most 3, biggest first.
             */
            steamers: string[];
            /**
             * @description Drifters: the runners not scratched whose win price lengthened most over the last
             *     15 minutes, at most 3, biggest first.
             */
            drifters: string[];
        };
        /**
         * @description One meeting: a venue's racing on a date, as the meetings endpoint lists it.
         * @example {
         *       "date": "2026-11-18",
         *       "venue": "Happy Valley",
         *       "races": 9,
         *       "card": true,
         *       "results": 9
         *     }
         */
        MeetingRow: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse. */
            venue: string;
            /** @description How many races are known for the meeting: those with a card or a result. */
            races: number;
            /** @description Whether a race card of the meeting exists. */
            card: boolean;
            /** @description How many of its races have a result. */
            results: number;
        };
        /**
         * @description The meetings of a range of dates, a page of at most [`MAX_RANGE_DAYS`] days at a time.
         * @example {
         *       "from": "2026-11-01",
         *       "to": "2026-11-30",
         *       "meetings": [
         *         {
         *           "date": "2026-11-15",
         *           "venue": "Sha Tin",
         *           "races": 10,
         *           "card": true,
         *           "results": 10
         *         },
         *         {
         *           "date": "2026-11-18",
         *           "venue": "Happy Valley",
         *           "races": 9,
         *           "card": true,
         *           "results": 0
         *         }
         *       ],
         *       "next": null
         *     }
         */
        Meetings: {
            /**
             * Format: date
             * @description The first date this page covers, `YYYY-MM-DD`: the request's `from`.
             */
            from: string;
            /**
             * Format: date
             * @description The last date this page covers, `YYYY-MM-DD`: the request's `to`, or, for a range
             *     of more than 366 days, the 366th day from `from`.
             */
            to: string;
            /** @description Every meeting from `from` to `to` with a card or a result, by date, then venue. */
            meetings: components["schemas"]["MeetingRow"][];
            /**
             * Format: date
             * @description Where the range goes on: the first date after this page, up to the request's `to`,
             *     that has a meeting; ask again with it as `from` (and the same `to`) for the next
             *     page. `null` when none is left.
             */
            next: string | null;
        };
        /**
         * Format: int64
         * @description A stream sequence (a publish's acknowledgement, a `Racing-Seq`): an integer from 0 written in digits; anything else is a 400.
         * @example 0
         */
        MinSeq: number;
        /**
         * @description Text to find in names, matched case-insensitively anywhere in the name: 2 to 50 characters; shorter or longer is a 400.
         * @example sixty
         */
        NameText: string;
        /**
         * @description An endpoint to make.
         * @example {
         *       "url": "https://hooks.example.com/racing",
         *       "topics": [
         *         "results",
         *         "status"
         *       ]
         *     }
         */
        NewWebhook: {
            /**
             * @description Where to send: `https`, to a host whose every address is public (plain `http`
             *     only to the networks the operator allows). At most 2,048 bytes, no credentials,
             *     no fragment. Redirects are not followed.
             */
            url: string;
            /**
             * @description What to send: any of `results`, `status`, `scratchings`, `cards` (a `retraction`
             *     goes with `results` and with `cards`). Odds are not offered: they move many times
             *     a second; follow them on the socket or the event stream.
             */
            topics: string[];
            /**
             * Format: date
             * @description Only the events of this race date, `YYYY-MM-DD`; every date if left out.
             */
            date?: string;
        };
        /** @description Where the following page of the change feed starts. */
        Next: number | string;
        /** @description One row of a breakdown by a numbered condition: a distance or a draw. */
        NumberRow: {
            /**
             * Format: int32
             * @description Races taken part in.
             */
            runs: number;
            /**
             * Format: int32
             * @description Of them, won.
             */
            wins: number;
            /**
             * Format: int32
             * @description Of them, second.
             */
            seconds: number;
            /**
             * Format: int32
             * @description Of them, third.
             */
            thirds: number;
            /**
             * Format: int32
             * @description Of them, first, second or third.
             */
            places: number;
            /**
             * Format: double
             * @description Wins in percent of runs, 1 decimal place.
             */
            strike_rate: number;
            /**
             * Format: double
             * @description Places in percent of runs, 1 decimal place.
             */
            place_rate: number;
            /**
             * Format: int32
             * @description Runs with recorded win odds.
             */
            bets: number;
            /**
             * Format: double
             * @description The profit or loss, in units, of a 1-unit win bet on each of `bets`.
             */
            level_stake: number;
            /**
             * Format: int64
             * @description The distance in metres, or the barrier draw.
             */
            value: number;
        };
        /**
         * @description A page of a race's odds history: the moves after a point of the log, oldest first.
         * @example {
         *       "date": "2026-11-21",
         *       "race_number": 1,
         *       "moves": [
         *         {
         *           "seq": 2702,
         *           "published_at": "2026-11-21T04:10:02.113Z",
         *           "occurred_at": "2026-11-21T04:10:02.000Z",
         *           "venue": "Sha Tin",
         *           "odds": [
         *             {
         *               "horse_no": "CA206",
         *               "win_odds": 2.4
         *             },
         *             {
         *               "horse_no": "E271",
         *               "win_odds": 3.1
         *             }
         *           ],
         *           "market": {
         *             "win_book_pct": 73.92,
         *             "favourites": [
         *               "CA206"
         *             ]
         *           }
         *         },
         *         {
         *           "seq": 2770,
         *           "published_at": "2026-11-21T04:11:40.561Z",
         *           "occurred_at": "2026-11-21T04:11:40.000Z",
         *           "venue": "Sha Tin",
         *           "odds": [
         *             {
         *               "horse_no": "CA206",
         *               "win_odds": 2.1
         *             }
         *           ],
         *           "market": {
         *             "win_book_pct": 79.88,
         *             "favourites": [
         *               "CA206"
         *             ]
         *           }
         *         }
         *       ],
         *       "next": 2770
         *     }
         */
        OddsHistory: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * @description The race's odds updates after `since`, in ascending `seq`, each as the live
             *     channel sent it.
             */
            moves: components["schemas"]["OddsMove"][];
            /**
             * Format: int64
             * @description The `seq` to pass as `since` for the following page; `null` at the end.
             */
            next: number | null;
        };
        /** @description One odds update of a race, as it went live. */
        OddsMove: {
            /**
             * Format: int64
             * @description Its stream sequence: a WebSocket `subscribe` with this `since` resumes after it.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored it, in UTC to the millisecond: when it was published, which for moves
             *     a feeder published late (a past race's, say) is not when they happened.
             */
            published_at: string;
            /**
             * Format: date-time
             * @description When the prices were given at their source: the event's `occurred_at`, in UTC to
             *     the millisecond whatever offset the feeder wrote.
             */
            occurred_at: string;
            /**
             * @description The racecourse the feeder gave it for; `null` for odds given without a venue (for
             *     the race of that number at every venue).
             */
            venue: string | null;
            /** @description The runners it priced, as the feeder gave them (a move may price only some). */
            odds: components["schemas"]["RunnerOdds"][];
            /**
             * @description The book of the race's prices after the move: `{win_book_pct, place_book_pct,
             *     favourites}`.
             */
            market: components["schemas"]["Book"];
        };
        /**
         * @description Items in a page: an integer from 1 to 10000 written in digits; anything else is a 400.
         * @default 1000
         * @example 100
         */
        PageLimit: number;
        /** @description The delivery under way. */
        PendingDelivery: {
            /**
             * Format: int64
             * @description The event's position.
             */
            seq: number;
            /**
             * Format: int32
             * @description Attempts made so far.
             */
            attempts: number;
            /**
             * Format: date-time
             * @description When the next is due (RFC 3339).
             */
            next_attempt_at: string;
        };
        /**
         * @description The slug of a jockey's or trainer's name: lower-case ASCII letters and digits, every other run of characters one `-`, none at either end, at most 100 characters; anything else is a 400.
         * @example z-purton
         */
        PersonId: string;
        /**
         * @description A jockey's or a trainer's record as served.
         * @example {
         *       "id": "z-purton",
         *       "name": "Z Purton",
         *       "rides": 412,
         *       "wins": 98,
         *       "seconds": 61,
         *       "thirds": 50,
         *       "win_pct": 23.8,
         *       "top3_pct": 50.7,
         *       "seasons": [
         *         {
         *           "season": "2026/27",
         *           "rides": 120,
         *           "wins": 30,
         *           "seconds": 18,
         *           "thirds": 15
         *         }
         *       ],
         *       "recent": [
         *         {
         *           "date": "2026-11-18",
         *           "venue": "Happy Valley",
         *           "race_number": 9,
         *           "horse_no": "K307",
         *           "horse_name": "ROMANTIC WARRIOR",
         *           "position": 1,
         *           "status": null,
         *           "win_odds": 2.3
         *         }
         *       ]
         *     }
         */
        PersonRecord: {
            /** @description The slug of the name: the id in the path. */
            id: string;
            /** @description The name as the newest result gives it. */
            name: string;
            /**
             * Format: int32
             * @description Runners in results, except those withdrawn (`WV`, `WV-A`, `WX`, `WX-A`, `WXNR`)
             *     or that took no part (`TNP`).
             */
            rides: number;
            /**
             * Format: int32
             * @description Rides that finished first (dead heats included).
             */
            wins: number;
            /**
             * Format: int32
             * @description Rides that finished second.
             */
            seconds: number;
            /**
             * Format: int32
             * @description Rides that finished third.
             */
            thirds: number;
            /**
             * Format: double
             * @description Wins in percent of rides, one decimal place (0.0 without rides).
             */
            win_pct: number;
            /**
             * Format: double
             * @description First, second or third in percent of rides, one decimal place.
             */
            top3_pct: number;
            /** @description The figures of each Hong Kong season (September to August), newest first. */
            seasons: components["schemas"]["SeasonDoc"][];
            /** @description The 20 newest rides, newest first (date, then race number, descending). */
            recent: components["schemas"]["RideDoc"][];
        };
        /** @description One person in a list. */
        PersonRow: {
            /** @description The slug of the name: `/api/v1/jockeys/{id}` (or trainers). */
            id: string;
            /** @description The name as the newest result gives it. */
            name: string;
            /**
             * Format: int32
             * @description Rides (see the person's record).
             */
            rides: number;
        };
        /**
         * @description A horse's profile, these fields in this order: origin, colour, sex, age, trainer,
         *     owner, stakes and record (its seconds and thirds where the feed gave them), then
         *     pedigree, import type, ratings and season stakes where the feed gave them (a field not
         *     given is left out).
         * @example {
         *       "horse_no": "E271",
         *       "horse_name": "GOLDEN SIXTY",
         *       "country_of_origin": "AUS",
         *       "colour": "Bay",
         *       "sex": "Gelding",
         *       "age": 9,
         *       "trainer": "F C Lor",
         *       "owner": "Stewart Leung",
         *       "total_stakes": 150218500,
         *       "starts": 32,
         *       "wins": 27,
         *       "places": 29,
         *       "seconds": 2,
         *       "thirds": 0,
         *       "sire": "Street Cry",
         *       "dam": "Clinque",
         *       "dam_sire": "Casual Lies",
         *       "import_type": "PPG",
         *       "current_rating": 126,
         *       "season_start_rating": 131,
         *       "season_stakes": 12500000
         *     }
         */
        Profile: {
            /** @description Brand number, the same value as in the path. */
            horse_no: string;
            /** @description Registered name. */
            horse_name: string;
            /** @description Short country code, e.g. `NZ`, `AUS`, `IRE`. */
            country_of_origin: string;
            /** @description Coat colour, e.g. `Bay`, `Chestnut`. */
            colour: string;
            /** @description e.g. `Gelding`, `Horse`, `Mare`. */
            sex: string;
            /**
             * Format: int64
             * @description Age in years.
             */
            age: number;
            /** @description Current trainer. */
            trainer: string;
            /** @description Current owner. */
            owner: string;
            /**
             * Format: int64
             * @description Career prize money in whole Hong Kong dollars (HK$).
             */
            total_stakes: number;
            /**
             * Format: int64
             * @description Career starts.
             */
            starts: number;
            /**
             * Format: int64
             * @description Career wins.
             */
            wins: number;
            /**
             * Format: int64
             * @deprecated
             * @description Deprecated (served on in `/api/v1`; `docs/api.md`, Versions and deprecation):
             *     career places as the feed gave them. From feed v1.3 the finishes in the first
             *     three, wins included (`wins + seconds + thirds`), as `places` means everywhere
             *     else; a feeder of an earlier version may have counted only seconds and thirds.
             *     Read `wins`, `seconds` and `thirds`.
             */
            places: number;
            /**
             * Format: int64
             * @description Career seconds. Left out where the feed did not give them.
             */
            seconds?: number;
            /**
             * Format: int64
             * @description Career thirds. Left out where the feed did not give them.
             */
            thirds?: number;
            /** @description Sire's name. Left out where the feed did not give it. */
            sire?: string;
            /** @description Dam's name. Left out where the feed did not give it. */
            dam?: string;
            /** @description Name of the dam's sire. Left out where the feed did not give it. */
            dam_sire?: string;
            /**
             * @description How the horse came to Hong Kong: `PP` (private purchase), `PPG` (private purchase
             *     griffin), `ISG` (international sale griffin), `VIS` (visiting); 1 to 8 upper-case
             *     letters. Left out where the feed did not give it.
             */
            import_type?: string;
            /**
             * Format: int64
             * @description Current handicap rating, 0 to 200. Left out where the feed did not give it.
             */
            current_rating?: number;
            /**
             * Format: int64
             * @description Handicap rating at the start of the season, 0 to 200. Left out where the feed did not give it.
             */
            season_start_rating?: number;
            /**
             * Format: int64
             * @description Prize money this season in whole Hong Kong dollars (HK$). Left out where the feed did not give it.
             */
            season_stakes?: number;
        };
        /**
         * @description The race card of a date: races in ascending race number,
         *     scratched runners removed.
         * @example {
         *       "date": "2026-11-21",
         *       "venue": "Sha Tin",
         *       "races": [
         *         {
         *           "race_number": 1,
         *           "race_name": "THE SHA TIN TROPHY",
         *           "distance": 1600,
         *           "class": "Group 3",
         *           "runners": [
         *             {
         *               "horse_no": "E271",
         *               "horse_name": "GOLDEN SIXTY",
         *               "jockey": "Z Purton",
         *               "trainer": "F C Lor",
         *               "draw": 4,
         *               "weight": 133,
         *               "form": {
         *                 "figures": "11/2131",
         *                 "runs": 24,
         *                 "days_since_run": 21,
         *                 "c": true,
         *                 "d": true,
         *                 "cd": true,
         *                 "course": {
         *                   "runs": 14,
         *                   "wins": 11,
         *                   "places": 13
         *                 },
         *                 "distance": {
         *                   "runs": 12,
         *                   "wins": 10,
         *                   "places": 12
         *                 },
         *                 "going": [
         *                   {
         *                     "going": "GOOD",
         *                     "runs": 18,
         *                     "wins": 15,
         *                     "places": 17
         *                   },
         *                   {
         *                     "going": "GOOD TO FIRM",
         *                     "runs": 6,
         *                     "wins": 4,
         *                     "places": 6
         *                   }
         *                 ],
         *                 "jockey_14d": {
         *                   "rides": 31,
         *                   "wins": 8,
         *                   "strike_rate": 25.8
         *                 },
         *                 "trainer_14d": {
         *                   "rides": 12,
         *                   "wins": 2,
         *                   "strike_rate": 16.7
         *                 }
         *               }
         *             }
         *           ]
         *         }
         *       ]
         *     }
         */
        RaceCard: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`; for `/racecards/today`, the day it is in the service's
             *     time zone.
             */
            date: string;
            /** @description Racecourse. */
            venue: string;
            /** @description Only on a date with more than one meeting: every venue of the day. */
            meetings?: string[];
            /** @description The meeting's races, ascending race number: each as [`card_race`] rendered it. */
            races: components["schemas"]["CardRace"][];
        };
        /**
         * @description Race number within the meeting: an integer from 1 to 99 written in digits; anything else is a 400.
         * @example 1
         */
        RaceNumber: number;
        /**
         * @description The current odds of a race, and its status where it was given one; the WebSocket's
         *     `snapshot` is this document with a `type` in front.
         * @example {
         *       "date": "2026-11-21",
         *       "venue": "Sha Tin",
         *       "race_number": 1,
         *       "seq": 2770,
         *       "status": "open",
         *       "status_at": "2026-11-21T04:05:00.000Z",
         *       "odds": [
         *         {
         *           "horse_no": "CA206",
         *           "win_odds": 2.1,
         *           "place_odds": 1.2,
         *           "win_prob": 0.4762,
         *           "place_prob": 0.8333,
         *           "first_win_odds": 2.6,
         *           "win_move_pct": -19.23,
         *           "win_move_15m_pct": -8.7,
         *           "win_move_5m_pct": 0
         *         },
         *         {
         *           "horse_no": "E271",
         *           "win_odds": 3.5,
         *           "win_prob": 0.2857,
         *           "first_win_odds": 3,
         *           "win_move_pct": 16.67,
         *           "win_move_15m_pct": 16.67,
         *           "win_move_5m_pct": 6.06
         *         }
         *       ],
         *       "market": {
         *         "clock": "2026-11-21T04:20:00.000Z",
         *         "win_book_pct": 76.19,
         *         "place_book_pct": 83.33,
         *         "favourites": [
         *           "CA206"
         *         ],
         *         "steamers": [
         *           "CA206"
         *         ],
         *         "drifters": [
         *           "E271"
         *         ]
         *       }
         *     }
         */
        RaceOdds: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * @description Racecourse whose race this is: the odds given for it and those given without a
             *     venue (for the race of that number at every venue), each runner at its latest
             *     price. `null` while no venue of the race is known (no card, result or odds naming
             *     one): the odds given without a venue.
             */
            venue: string | null;
            /** @description Only on a date with more than one meeting: every venue of the day. */
            meetings?: string[];
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the latest odds update of the race: resume the WebSocket from
             *     here with `since`.
             */
            seq: number;
            /** @description The race's status: left out for a race never given one. */
            status?: components["schemas"]["RaceStatus"];
            /**
             * Format: date-time
             * @description When the race took its status (the `occurred_at` of the event that gave it, or of
             *     the result that finished it); left out with `status`.
             */
            status_at?: string;
            /** @description Why, where the feed said; left out where it did not. */
            status_reason?: string;
            /**
             * @description Every runner with a price, in horse-number order, those scratched from the race
             *     marked `scratched`.
             */
            odds: components["schemas"]["RunnerMarket"][];
            /** @description The market the prices of the runners not scratched make. */
            market: components["schemas"]["Market"];
        };
        /**
         * @description The result of one race, with the meeting's date and venue: its fields after those of
         *     [`RaceHead`] are those of [`ResultRace`], in the same order, which is how
         *     [`render_results`] writes it. (The type gives the schema, and a test holds the bytes
         *     written to it.)
         * @example {
         *       "date": "2026-11-18",
         *       "venue": "Happy Valley",
         *       "race_number": 1,
         *       "race_name": "KITE HANDICAP",
         *       "distance": 1200,
         *       "going": "GOOD",
         *       "runners": [
         *         {
         *           "position": 1,
         *           "horse_no": "E271",
         *           "horse_name": "GOLDEN SIXTY",
         *           "jockey": "Z Purton",
         *           "trainer": "F C Lor",
         *           "finish_time": "1:09.45",
         *           "win_odds": 3.5,
         *           "status": null,
         *           "dead_heat": true
         *         },
         *         {
         *           "position": 1,
         *           "horse_no": "CA206",
         *           "horse_name": "ROMANTIC WARRIOR",
         *           "jockey": "J McDonald",
         *           "trainer": "C S Shum",
         *           "finish_time": "1:09.45",
         *           "win_odds": 2.1,
         *           "status": null,
         *           "dead_heat": true,
         *           "lbw": "-",
         *           "lbw_lengths": 0,
         *           "running_positions": [
         *             5,
         *             4,
         *             1
         *           ],
         *           "actual_weight": 126,
         *           "declared_weight": 1120,
         *           "draw": 7
         *         }
         *       ],
         *       "class": "Class 3"
         *     }
         */
        RaceResult: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse. */
            venue: string;
            /** @description Only on a date with more than one meeting: every venue of the day. */
            meetings?: string[];
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /** @description Race name. */
            race_name: string;
            /**
             * Format: int64
             * @description Race distance in metres.
             */
            distance: number;
            /** @description Track condition. */
            going: string;
            /** @description Placed runners by position, then the rest as the feed listed them. */
            runners: components["schemas"]["ResultRunner"][];
            /** @description Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none. */
            class?: string;
        };
        /**
         * @description Where the race stands: `open` (betting open), `suspended` (betting stopped for a while), `off` (started), `finished` (run; result to come or in), `abandoned` (will not be run), `void` (run but declared void).
         * @enum {string}
         */
        RaceStatus: "open" | "suspended" | "off" | "finished" | "abandoned" | "void";
        /** @description Runs, wins and places (the first three) of some runs. */
        Record: {
            /**
             * Format: int32
             * @description Races taken part in (withdrawals and `TNP` left out).
             */
            runs: number;
            /**
             * Format: int32
             * @description Of them, won (dead heats for first included).
             */
            wins: number;
            /**
             * Format: int32
             * @description Of them, finished first, second or third.
             */
            places: number;
        };
        /** @description A race's result was published or amended (topic `results`). */
        ResultFrame: {
            /** @description Which message this is. */
            type: "result";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description The event's racecourse; `null` where it gave none. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the event.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the event (RFC 3339).
             */
            published_at: string;
            /** @description The race's result document, exactly as HTTP serves it. */
            result: components["schemas"]["RaceResult"];
        };
        /** @description One race of the results of a date. */
        ResultRace: {
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /** @description e.g. `KITE HANDICAP`. */
            race_name: string;
            /**
             * Format: int64
             * @description Race distance in metres.
             */
            distance: number;
            /** @description Track condition, e.g. `GOOD`, `GOOD TO FIRM`. */
            going: string;
            /** @description Placed runners by position, then the rest as the feed listed them. */
            runners: components["schemas"]["ResultRunner"][];
            /** @description Race class, e.g. `Class 4`, `Group 1`. Left out where the result gave none. */
            class?: string;
        };
        /**
         * @description One runner of a race result (with `status` and `dead_heat`, then the runner's
         *     record where the feed gave it: a field not given is left out).
         */
        ResultRunner: {
            /**
             * Format: int64
             * @description Finishing position from 1 (shared in a dead heat); `null` for no placing.
             */
            position: number | null;
            /** @description Brand number. */
            horse_no: string;
            /** @description Registered name. */
            horse_name: string;
            /** @description Jockey who rode. */
            jockey: string;
            /** @description Trainer. */
            trainer: string;
            /** @description Finishing time, `m:ss.cc`; `null` where there is none. */
            finish_time: string | null;
            /**
             * Format: double
             * @description Final decimal win odds, stake included; `null` where there are none.
             */
            win_odds: number | null;
            /** @description `null` for a normal finisher, otherwise the official code (`PU`, `WV-A`, ...). */
            status: string | null;
            /** @description Whether the position is shared with another runner. */
            dead_heat: boolean;
            /**
             * @description Lengths behind the winner as officially written: `-` for the winner, `NOSE`, `SH`
             *     (short head), `HD` (head), `N` (neck), lengths with an optional fraction (`3/4`,
             *     `1-1/4`, `10-3/4`), or a code with no margin (`ML`, `DIST`, `---`). Left out where the feed did not give it.
             */
            lbw?: string;
            /**
             * Format: double
             * @description `lbw` as a number of lengths behind the winner: `-` is 0, `1-1/4` is 1.25; `NOSE`,
             *     `SH`, `HD`, `N` are 0.05, 0.1, 0.2, 0.3. `null` where `lbw` is no number of lengths
             *     (`ML`, `DIST`, `---`). Present exactly when `lbw` is.
             */
            lbw_lengths?: number | null;
            /**
             * @description The runner's position at each call of the race, in order (1 to 6 positions of 1 to
             *     99); the last is at the finish. Left out where the feed did not give it.
             */
            running_positions?: number[];
            /**
             * Format: int64
             * @description Weight carried, in pounds (90 to 160). Left out where the feed did not give it.
             */
            actual_weight?: number;
            /**
             * Format: int64
             * @description The horse's own body weight declared before the race, in pounds (700 to 1500).
             *     Left out where the feed did not give it.
             */
            declared_weight?: number;
            /**
             * Format: int64
             * @description Barrier draw, 1 to 99. Left out where the feed did not give it.
             */
            draw?: number;
        };
        /**
         * @description All results of a date: races in ascending race number.
         * @example {
         *       "date": "2026-11-18",
         *       "venue": "Happy Valley",
         *       "races": [
         *         {
         *           "race_number": 1,
         *           "race_name": "KITE HANDICAP",
         *           "distance": 1200,
         *           "going": "GOOD",
         *           "runners": [
         *             {
         *               "position": 1,
         *               "horse_no": "E271",
         *               "horse_name": "GOLDEN SIXTY",
         *               "jockey": "Z Purton",
         *               "trainer": "F C Lor",
         *               "finish_time": "1:09.45",
         *               "win_odds": 3.5,
         *               "status": null,
         *               "dead_heat": true,
         *               "lbw": "-",
         *               "lbw_lengths": 0,
         *               "running_positions": [
         *                 3,
         *                 2,
         *                 1
         *               ],
         *               "actual_weight": 133,
         *               "declared_weight": 1198,
         *               "draw": 4
         *             },
         *             {
         *               "position": null,
         *               "horse_no": "H123",
         *               "horse_name": "LUCKY STAR",
         *               "jockey": "K Teetan",
         *               "trainer": "J Size",
         *               "finish_time": null,
         *               "win_odds": 45,
         *               "status": "PU",
         *               "dead_heat": false,
         *               "lbw": "---",
         *               "lbw_lengths": null,
         *               "running_positions": [
         *                 9,
         *                 12
         *               ],
         *               "actual_weight": 118,
         *               "declared_weight": 1087,
         *               "draw": 11
         *             }
         *           ],
         *           "class": "Class 3"
         *         }
         *       ]
         *     }
         */
        ResultsByDate: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse of this meeting. */
            venue: string;
            /**
             * @description Only on a date with more than one meeting: every venue of the day, so a client
             *     can ask for the others with `?venue=`.
             */
            meetings?: string[];
            /** @description The meeting's races, ascending race number: each as [`result_race`] rendered it. */
            races: components["schemas"]["ResultRace"][];
        };
        /** @description A race's result or card was retracted (topics `results` and `cards`). */
        RetractionFrame: {
            /** @description Which message this is. */
            type: "retraction";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description The event's racecourse; `null` where it gave none. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the event.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the event (RFC 3339).
             */
            published_at: string;
            /** @description Why, as the event said. */
            reason: string;
        };
        /** @description One ride in a person's record. */
        RideDoc: {
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse. */
            venue: string;
            /**
             * Format: int64
             * @description Race number within the meeting.
             */
            race_number: number;
            /** @description Brand number of the horse. */
            horse_no: string;
            /** @description The horse's name in that result. */
            horse_name: string;
            /**
             * Format: int64
             * @description Finishing position; `null` when it did not finish.
             */
            position: number | null;
            /** @description The result's special status (`PU`, `DISQ`, ...), `null` for an ordinary finish. */
            status: string | null;
            /**
             * Format: double
             * @description Final win odds; `null` where the result gave none.
             */
            win_odds: number | null;
        };
        /**
         * @description One row of a breakdown by a named condition: a venue, a going, a class, a jockey
         *     or a trainer.
         */
        Row: {
            /**
             * Format: int32
             * @description Races taken part in.
             */
            runs: number;
            /**
             * Format: int32
             * @description Of them, won.
             */
            wins: number;
            /**
             * Format: int32
             * @description Of them, second.
             */
            seconds: number;
            /**
             * Format: int32
             * @description Of them, third.
             */
            thirds: number;
            /**
             * Format: int32
             * @description Of them, first, second or third.
             */
            places: number;
            /**
             * Format: double
             * @description Wins in percent of runs, 1 decimal place.
             */
            strike_rate: number;
            /**
             * Format: double
             * @description Places in percent of runs, 1 decimal place.
             */
            place_rate: number;
            /**
             * Format: int32
             * @description Runs with recorded win odds.
             */
            bets: number;
            /**
             * Format: double
             * @description The profit or loss, in units, of a 1-unit win bet on each of `bets`.
             */
            level_stake: number;
            /** @description The racecourse, going, class, or the person's name as the newest run of the row gives it. */
            value: string;
        };
        /** @description A runner's form as of its race's date, from the results of earlier dates alone. */
        RunnerForm: {
            /**
             * @description Form figures: the horse's last six races before this one, newest last, one
             *     character each: its position (`1` to `9`, `0` for tenth or worse or no placing),
             *     or a letter for a runner with an official code: `P` pulled up, `U` unseated rider,
             *     `F` fell, `X` did not finish, `D` disqualified, `W` withdrawn, `T` took no part,
             *     otherwise the code's first letter. A `/` stands between races of two Hong Kong
             *     seasons (September to August). Empty for a horse that has raced nowhere.
             */
            figures: string;
            /**
             * Format: int32
             * @description Races it took part in before this one (withdrawals and `TNP` left out).
             */
            runs: number;
            /**
             * Format: int64
             * @description Days from its last race taken part in to this race's date; `null` for none.
             */
            days_since_run: number | null;
            /** @description `C`: it has won at this racecourse. */
            c: boolean;
            /** @description `D`: it has won over this distance. */
            d: boolean;
            /** @description `CD`: it has won at this racecourse over this distance, in one race. */
            cd: boolean;
            /** @description Its record at this racecourse. */
            course: components["schemas"]["Record"];
            /** @description Its record over this distance. */
            distance: components["schemas"]["Record"];
            /** @description Its record on each going it has raced on, in the going's name order. */
            going: components["schemas"]["GoingRecord"][];
            /** @description The declared jockey's rides in the 14 days before the race's date. */
            jockey_14d: components["schemas"]["Strike"];
            /** @description The trainer's runners in the 14 days before the race's date. */
            trainer_14d: components["schemas"]["Strike"];
        };
        /**
         * @description A runner's current prices: win, place or both; a price the runner was never given is
         *     left out.
         */
        RunnerMarket: {
            /** @description Brand number. */
            horse_no: string;
            /**
             * @description `true` for a runner scratched from the race: it keeps its last prices here, and
             *     the books, the favourites and the movers leave it out. Left out for a runner that
             *     can still run.
             */
            scratched?: boolean;
            /**
             * Format: double
             * @description Decimal win odds, stake included (at least 1.0): a winning 1-dollar bet returns
             *     this.
             */
            win_odds?: number;
            /**
             * Format: double
             * @description Decimal place odds, stake included (at least 1.0): a placed 1-dollar bet returns
             *     this.
             */
            place_odds?: number;
            /**
             * Format: double
             * @description Implied probability of the win price: 1 / `win_odds`, 4 decimal places.
             */
            win_prob?: number;
            /**
             * Format: double
             * @description Implied probability of the place price: 1 / `place_odds`, 4 decimal places.
             */
            place_prob?: number;
            /**
             * Format: double
             * @description The runner's first win price in this market.
             */
            first_win_odds?: number;
            /**
             * Format: double
             * @description The win price's move since `first_win_odds`, in percent of it, 2 decimal places:
             *     below 0 shortened (backed), above 0 lengthened.
             */
            win_move_pct?: number;
            /**
             * Format: double
             * @description The win price's move since the start of the market clock's minute less 15
             *     minutes, in percent of the price then; left out where the runner had no win price then.
             */
            win_move_15m_pct?: number;
            /**
             * Format: double
             * @description The same over the last 5 minutes of the clock.
             */
            win_move_5m_pct?: number;
        };
        /**
         * @description A runner's prices as an odds move gives them: win, place or both, each only where
         *     given (the schema of a move's runners; the journal keeps them as the feed gave them).
         */
        RunnerOdds: {
            /** @description Brand number. */
            horse_no: string;
            /**
             * Format: double
             * @description Decimal win odds, stake included (at least 1.0); left out where the move gave
             *     only a place price.
             */
            win_odds?: number;
            /**
             * Format: double
             * @description Decimal place odds, stake included (at least 1.0), where the move gave one.
             */
            place_odds?: number;
        };
        /** @description A runner was scratched (topic `scratchings`). */
        ScratchingFrame: {
            /** @description Which message this is. */
            type: "scratching";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description The event's racecourse; `null` where it gave none. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the event.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the event (RFC 3339).
             */
            published_at: string;
            /** @description Brand number of the scratched runner. */
            horse_no: string;
        };
        /**
         * @description Horses in the answer: an integer from 1 to 100 written in digits; anything else is a 400.
         * @default 20
         * @example 20
         */
        SearchLimit: number;
        /** @description A person's figures in one season. */
        SeasonDoc: {
            /** @description The season, September to August, e.g. `2019/20` (2019-09-01 to 2020-08-31). */
            season: string;
            /**
             * Format: int32
             * @description Rides in the season.
             */
            rides: number;
            /**
             * Format: int32
             * @description Wins.
             */
            wins: number;
            /**
             * Format: int32
             * @description Seconds.
             */
            seconds: number;
            /**
             * Format: int32
             * @description Thirds.
             */
            thirds: number;
        };
        /**
         * Format: int64
         * @description A stream sequence (a page's `next`, a `Racing-Seq`): an integer from 0 written in digits; anything else is a 400.
         * @example 0
         */
        Since: number;
        /** @description A race's status changed (topic `status`). */
        StatusFrame: {
            /** @description Which message this is. */
            type: "status";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description The event's racecourse; `null` where it gave none. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the event.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the event (RFC 3339).
             */
            published_at: string;
            /** @description The race's status now. */
            status: components["schemas"]["RaceStatus"];
            /** @description Why, where the event said; left out otherwise. */
            reason?: string;
        };
        /** @description A jockey's or a trainer's rides and wins over a span, and the strike rate. */
        Strike: {
            /**
             * Format: int32
             * @description Rides (for a trainer, runners) that took part.
             */
            rides: number;
            /**
             * Format: int32
             * @description Of them, won.
             */
            wins: number;
            /**
             * Format: double
             * @description Wins in percent of rides, 1 decimal place (0.0 without rides).
             */
            strike_rate: number;
        };
        /**
         * Format: date
         * @description The last date of the range: a real calendar date written `YYYY-MM-DD`; anything else is a 400.
         * @example 2026-11-01
         */
        ToDate: string;
        /**
         * @description Every trainer, by name.
         * @example {
         *       "trainers": [
         *         {
         *           "id": "c-s-shum",
         *           "name": "C S Shum",
         *           "rides": 240
         *         }
         *       ]
         *     }
         */
        TrainerList: {
            /** @description Every trainer with a runner that rode, by name (then id). */
            trainers: components["schemas"]["PersonRow"][];
        };
        /**
         * @description Racecourse of the meeting, e.g. `Sha Tin` or `Happy Valley`; empty or blank is a 400.
         * @example Happy Valley
         */
        Venue: string;
        /** @description An endpoint as the API shows it. */
        Webhook: {
            /** @description `ep_` and 16 hex digits. */
            id: string;
            /** @description Where deliveries go. */
            url: string;
            /** @description What it is sent. */
            topics: string[];
            /**
             * Format: date
             * @description Only this race date's events, where it was given.
             */
            date?: string;
            /**
             * Format: date-time
             * @description When it was made (RFC 3339).
             */
            created_at: string;
            /**
             * Format: int64
             * @description The log's position when it was made: the events after it are sent.
             */
            since: number;
            /** @description Whether deliveries are sent to it. */
            enabled: boolean;
            /**
             * Format: date-time
             * @description When it was disabled (after a 410, or after every attempt of the retry schedule
             *     failed), if it was.
             */
            disabled_at?: string;
            /** @description Why it was disabled. */
            disabled_reason?: string;
            /**
             * @description Its signing secret, `whsec_` and base64: only in the answer that made it or
             *     rotated it, never shown again.
             */
            secret?: string;
        };
        /** @description One attempt, as `GET /api/v1/webhooks/{id}/deliveries` lists it. */
        WebhookAttempt: {
            /**
             * Format: int64
             * @description The event's position.
             */
            seq: number;
            /** @description The delivery's `webhook-id`. */
            webhook_id: string;
            /** @description The payload's `type`. */
            type: string;
            /**
             * Format: int32
             * @description Which attempt of the delivery it was, from 1.
             */
            attempt: number;
            /**
             * Format: date-time
             * @description When it was made, RFC 3339.
             */
            at: string;
            /**
             * @description `delivered`, `failed` (another attempt follows) or `given_up` (the endpoint was
             *     disabled).
             */
            status: string;
            /**
             * Format: int32
             * @description The receiver's status code, if it answered.
             */
            response_code?: number;
            /** @description Why it failed without an answer, or the start of a failed answer's body. */
            error?: string;
            /**
             * Format: date-time
             * @description When the next attempt is due, RFC 3339, after a failure.
             */
            next_attempt_at?: string;
            /**
             * Format: int64
             * @description How long it took, milliseconds.
             */
            duration_ms: number;
        };
        /**
         * @description An endpoint's deliveries: how far it has been sent, what is under way, the recent
         *     attempts.
         */
        WebhookDeliveries: {
            /** @description The endpoint. */
            id: string;
            /**
             * Format: int64
             * @description Every event up to this position has been delivered (or was not of its topics).
             */
            position: number;
            pending?: null | components["schemas"]["PendingDelivery"];
            /** @description The recent attempts (at most 50), newest first. */
            attempts: components["schemas"]["WebhookAttempt"][];
        };
        /** @description A key's endpoints. */
        WebhookList: {
            /** @description By id. */
            webhooks: components["schemas"]["Webhook"][];
        };
        /** @description What a `ping` came to. */
        WebhookTest: {
            /** @description The `webhook-id` it was sent with. */
            webhook_id: string;
            /** @description Whether the receiver answered 2xx. */
            delivered: boolean;
            /**
             * Format: int32
             * @description The receiver's status code, if it answered.
             */
            response_code?: number;
            /**
             * @description Why it failed without an answer (refused by the forgery rules, no connection, a
             *     timeout), or the start of a failed answer's body.
             */
            error?: string;
            /**
             * Format: int64
             * @description How long it took, milliseconds.
             */
            duration_ms: number;
        };
    };
    responses: {
        /** @description `bad_request`: a malformed path segment, or an unknown, repeated or bad query parameter; the message says which. */
        BadRequest: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "bad_request",
                 *       "message": "unknown query parameter `page` (this endpoint takes no query parameters)"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `body_not_accepted`: the request has a body; the API is read-only and reads none. */
        BodyNotAccepted: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "body_not_accepted",
                 *       "message": "the API takes no request body"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `headers_too_large`: more than 64 header fields or 16 KiB of headers. */
        HeadersTooLarge: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "headers_too_large",
                 *       "message": "at most 64 header fields and 16384 header bytes are accepted"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `internal`: a bug; the details are in the service's log only. */
        Internal: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "internal",
                 *       "message": "internal error"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `method_not_allowed`: any method but GET and HEAD on this path (`Allow: GET, HEAD`). Listed on the GET operation because OpenAPI has no place for the answers to undeclared methods. */
        MethodNotAllowed: {
            headers: {
                /** @description `GET, HEAD` */
                Allow?: string;
                /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                RateLimit?: string;
                /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "method_not_allowed",
                 *       "message": "only GET and HEAD are allowed"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description Not modified: the `If-None-Match` of the request matches the current `ETag` (or is `*`). No body. On the data endpoints, with the 200's `Racing-Seq`. */
        NotModified: {
            headers: {
                /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                "Cache-Control"?: string;
                /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                ETag?: string;
                /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                RateLimit?: string;
                /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                "RateLimit-Policy"?: string;
                [name: string]: unknown;
            };
            content?: never;
        };
        /** @description `rate_limited`: over the key's request rate (come back after `Retry-After` seconds), or, on the WebSocket, too many open connections for the key. */
        RateLimited: {
            headers: {
                /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                RateLimit?: string;
                /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                "RateLimit-Policy"?: string;
                /** @description Seconds until a request will be accepted again. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "rate_limited",
                 *       "message": "too many requests for this key; retry in 1 s"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `unauthorized`: a missing or wrong key, on any path and any method, checked before routing. Always exactly this body. */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "unauthorized",
                 *       "message": "Invalid or missing API key"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `unavailable`: the read models are still being built at start-up, the service is at its in-flight limit, or the request took over the time limit (`Retry-After: 1`); a read with `min_seq` (or `Racing-Min-Seq`, or an `as_of` past the checkpoint) whose position the read models here did not reach within the wait (`Retry-After: 1`, the checkpoint they hold in `Racing-Checkpoint` and the body's `checkpoint`); or, for a managed key, the key registry has been out of reach for too long to check the key for revocation (`Retry-After: 5`). */
        Unavailable: {
            headers: {
                /** @description Only for a position not reached in time: the checkpoint the read models hold. */
                "Racing-Checkpoint"?: number;
                /** @description `1` (`5` for a key not checked): retry in a second. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "unavailable",
                 *       "message": "the read models are still being built from the log; retry shortly"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description `uri_too_long`: the request target (path and query) is over 2,048 bytes. */
        UriTooLong: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": "uri_too_long",
                 *       "message": "the request target is over 2048 bytes"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    api_index: {
        parameters: {
            query?: {
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The index. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiIndex"];
                };
            };
            304: components["responses"]["NotModified"];
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    meetings: {
        parameters: {
            query?: {
                /** @description The first date, `YYYY-MM-DD`. Meetings: default 30 days before today (in `RACING_TIMEZONE`). Records by condition: default the first race. */
                from?: components["schemas"]["FromDate"];
                /** @description The last date, `YYYY-MM-DD` (before `from`: a range of no dates). Meetings: default 14 days after today (in `RACING_TIMEZONE`); a page covers at most 366 days of the range. Records by condition: default the last race. */
                to?: components["schemas"]["ToDate"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The meetings of the range, or of its first 366 days. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Meetings"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a `from` or `to` that is not a real `YYYY-MM-DD`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    horse_search: {
        parameters: {
            query: {
                /** @description Part of a name, 2 to 50 characters, whatever the case. */
                name: components["schemas"]["NameText"];
                /** @description At most this many horses, 1 to 100 (default 20). */
                limit?: components["schemas"]["SearchLimit"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The horses found (maybe none). */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HorseSearch"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: no `name`, a `name` not of 2 to 50 characters, a `limit` not from 1 to 100, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    horse_profile: {
        parameters: {
            query?: {
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The horse's brand number, e.g. `E271`. */
                horse_no: components["schemas"]["HorseNo"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The horse's profile. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Profile"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a malformed horse number, or a query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no profile for that horse number. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    horse_form: {
        parameters: {
            query?: {
                /** @description Keep only the newest N entries, 1 to 1000. */
                limit?: components["schemas"]["FormLimit"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The horse's brand number, e.g. `E271`. */
                horse_no: components["schemas"]["HorseNo"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The horse's form. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Form"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a malformed horse number, a `limit` that is not an integer from 1 to 1000, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: a horse that appears in no result and has no profile. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    horse_analysis: {
        parameters: {
            query?: {
                /** @description The first date, `YYYY-MM-DD`. Meetings: default 30 days before today (in `RACING_TIMEZONE`). Records by condition: default the first race. */
                from?: components["schemas"]["FromDate"];
                /** @description The last date, `YYYY-MM-DD` (before `from`: a range of no dates). Meetings: default 14 days after today (in `RACING_TIMEZONE`); a page covers at most 366 days of the range. Records by condition: default the last race. */
                to?: components["schemas"]["ToDate"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The horse's brand number, e.g. `E271`. */
                horse_no: components["schemas"]["HorseNo"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records by condition. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Analysis"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a malformed horse number, a `from` or `to` that is not a real `YYYY-MM-DD`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: the horse is in no result (as of the point). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    results_by_date: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date: components["schemas"]["Date"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The results of the date. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ResultsByDate"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a date that is not a real `YYYY-MM-DD`, an empty `venue`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no results for the date (or venue). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    race_result: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date: components["schemas"]["Date"];
                /** @description Race number within the meeting, 1 to 99. */
                race_number: components["schemas"]["RaceNumber"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The race's result. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RaceResult"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not from 1 to 99, an empty `venue`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no such race on that date (or venue). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    racecard_today: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Today's race card. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RaceCard"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: an empty `venue`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no meeting today (or none at the venue); the message names the date. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    racecard_by_date: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date: components["schemas"]["Date"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The race card of the date. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RaceCard"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a date that is not a real `YYYY-MM-DD`, an empty `venue`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no race card for the date (or venue). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    race_odds: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date: components["schemas"]["Date"];
                /** @description Race number within the meeting, 1 to 99. */
                race_number: components["schemas"]["RaceNumber"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The race's current odds. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RaceOdds"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not from 1 to 99, an empty `venue`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no odds for the race (or for the race at the venue). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    odds_history: {
        parameters: {
            query?: {
                /** @description For a date with more than one meeting: the racecourse whose meeting to answer with. Without it such a date answers with the meeting that has the most races (ties: alphabetical) and lists every venue in `meetings`. */
                venue?: components["schemas"]["Venue"];
                /** @description A stream sequence: only what came after it. Without it, from the start of the log. Pass a page's `next` to read the following page. */
                since?: components["schemas"]["Since"];
                /** @description At most this many items in the page, 1 to 10000 (default 1000). */
                limit?: components["schemas"]["PageLimit"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date: components["schemas"]["Date"];
                /** @description Race number within the meeting, 1 to 99. */
                race_number: components["schemas"]["RaceNumber"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the race's odds moves. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OddsHistory"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a date that is not a real `YYYY-MM-DD`, a race number not from 1 to 99, an empty `venue`, a `since` that is not a stream sequence, a `limit` not from 1 to 10000, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: the race (or the race at the venue) has no odds at all. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    jockeys: {
        parameters: {
            query?: {
                /** @description Part of a name, 2 to 50 characters, whatever the case. */
                name?: components["schemas"]["NameText"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The jockeys (maybe none). */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JockeyList"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a `name` not of 2 to 50 characters, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    jockey: {
        parameters: {
            query?: {
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The slug of the name: lower-case letters and digits, words joined by `-` (`Z Purton` is `z-purton`), as the list gives it. */
                id: components["schemas"]["PersonId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The jockey's record. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonRecord"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: an id not of slug form (lower-case letters and digits, words joined by single `-`), or a query parameter other than `min_seq`. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no jockey of that id has a ride. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    jockey_analysis: {
        parameters: {
            query?: {
                /** @description The first date, `YYYY-MM-DD`. Meetings: default 30 days before today (in `RACING_TIMEZONE`). Records by condition: default the first race. */
                from?: components["schemas"]["FromDate"];
                /** @description The last date, `YYYY-MM-DD` (before `from`: a range of no dates). Meetings: default 14 days after today (in `RACING_TIMEZONE`); a page covers at most 366 days of the range. Records by condition: default the last race. */
                to?: components["schemas"]["ToDate"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The slug of the name: lower-case letters and digits, words joined by `-` (`Z Purton` is `z-purton`), as the list gives it. */
                id: components["schemas"]["PersonId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records by condition. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Analysis"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: an id not of slug form, a `from` or `to` that is not a real `YYYY-MM-DD`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no jockey of that id has a ride (as of the point). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    trainers: {
        parameters: {
            query?: {
                /** @description Part of a name, 2 to 50 characters, whatever the case. */
                name?: components["schemas"]["NameText"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The trainers (maybe none). */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrainerList"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a `name` not of 2 to 50 characters, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    trainer: {
        parameters: {
            query?: {
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The slug of the name: lower-case letters and digits, words joined by `-` (`Z Purton` is `z-purton`), as the list gives it. */
                id: components["schemas"]["PersonId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The trainer's record. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PersonRecord"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: an id not of slug form (lower-case letters and digits, words joined by single `-`), or a query parameter other than `min_seq`. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no trainer of that id has a ride. A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    trainer_analysis: {
        parameters: {
            query?: {
                /** @description The first date, `YYYY-MM-DD`. Meetings: default 30 days before today (in `RACING_TIMEZONE`). Records by condition: default the first race. */
                from?: components["schemas"]["FromDate"];
                /** @description The last date, `YYYY-MM-DD` (before `from`: a range of no dates). Meetings: default 14 days after today (in `RACING_TIMEZONE`); a page covers at most 366 days of the range. Records by condition: default the last race. */
                to?: components["schemas"]["ToDate"];
                /** @description A stream sequence: the document exactly as it was served once the log up to it had been applied, byte for byte (a result amended later as first published, a form with only the runs known then). 404 where the document did not exist then, or where the log does not reach it yet. Past the checkpoint here, it is waited for as `min_seq` is. Its answer never changes. */
                as_of?: components["schemas"]["AsOf"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path: {
                /** @description The slug of the name: lower-case letters and digits, words joined by `-` (`Z Purton` is `z-purton`), as the list gives it. */
                id: components["schemas"]["PersonId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records by condition. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Analysis"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: an id not of slug form, a `from` or `to` that is not a real `YYYY-MM-DD`, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no trainer of that id has a ride (as of the point). A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    changes: {
        parameters: {
            query?: {
                /** @description A stream sequence: only the changes after it; or a page's `next`, which may stand inside one sequence's changes (`SEQ.N`). Without it, from the start of the log. */
                since?: components["schemas"]["ChangeSince"];
                /** @description At most this many items in the page, 1 to 10000 (default 1000). */
                limit?: components["schemas"]["PageLimit"];
                /** @description A stream sequence (a feeder's acknowledgement gives it, as `racing publish` prints it; a `Racing-Seq` read from another replica): answer only once the read models here hold the log up to it, waiting for them up to a limit (`RACING_MIN_SEQ_WAIT_MS`, 2 s by default), then a 503 with `Retry-After` and the checkpoint they hold (header `Racing-Checkpoint`, the body's `checkpoint`); a position past the end of the log is a 404 at once. The header `Racing-Min-Seq` says the same; with both, the larger counts. */
                min_seq?: components["schemas"]["MinSeq"];
            };
            header?: {
                /** @description As the query parameter `min_seq` (with both, the larger counts): answer only once the read models hold the log up to this stream sequence. */
                "Racing-Min-Seq"?: components["schemas"]["MinSeq"];
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the change feed. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description The stream sequence the answer reflects: for a document, where the log stood when it last changed (it has answered the same since), or its `as_of`; for a page of history, the checkpoint it was read at. A WebSocket `subscribe` with it as `since` misses nothing after the answer and repeats nothing in it; it is also an `as_of` that answers this document again. */
                    "Racing-Seq"?: number;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Changes"];
                };
            };
            304: components["responses"]["NotModified"];
            /** @description `bad_request`: a `since` that is not a stream sequence or a page's `next`, a `limit` not from 1 to 10000, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: A `min_seq` (or `Racing-Min-Seq`, or `as_of`) past the end of the log: no event has that position yet. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    odds_socket: {
        parameters: {
            query?: never;
            header: {
                /** @description `Upgrade` (one of its comma-separated tokens, whatever the case). */
                Connection: string;
                /** @description `websocket`, whatever the case. */
                Upgrade: string;
                /** @description 16 random bytes in base64 (24 characters ending `==`), as RFC 6455 asks. */
                "Sec-WebSocket-Key": string;
                /** @description `13`. */
                "Sec-WebSocket-Version": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switching Protocols: the connection now speaks the live odds protocol described above. */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `bad_request`: not a WebSocket upgrade request, or a query parameter other than `api_key`. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            /** @description `rate_limited`: too many open live odds connections for the key, or over the key's request rate (upgrades count as requests). */
            429: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            /** @description `unavailable`: the read models are still being built from the log at start-up, or a managed key cannot be checked for revocation (the key registry out of reach); `Retry-After` says when to try again. */
            503: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    live_events: {
        parameters: {
            query?: {
                /** @description Meeting date, `YYYY-MM-DD`. */
                date?: string;
                /** @description Race within the meeting, 1 to 99. */
                race_number?: number;
                /** @description Comma-separated topics; `odds` if left out. */
                topics?: string;
                /** @description Resume after this position. */
                since?: number;
                /** @description 0 to 120000: odds moves of a race within this many milliseconds go out as one frame with each runner's latest prices; 0 (the default) sends every move. */
                conflate_ms?: number;
            };
            header: {
                /** @description The last event's id: resume after it. */
                "Last-Event-ID"?: string | null;
                /** @description `Upgrade` (one of its comma-separated tokens, whatever the case). */
                Connection: string;
                /** @description `websocket`, whatever the case. */
                Upgrade: string;
                /** @description 16 random bytes in base64 (24 characters ending `==`), as RFC 6455 asks. */
                "Sec-WebSocket-Key": string;
                /** @description `13`. */
                "Sec-WebSocket-Version": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stream. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description `bad_request`: a malformed parameter, a parameter that needs a `date` without one, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            /** @description `rate_limited`: too many open live connections for the key, or over its request rate. */
            429: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_list: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's endpoints. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_create: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewWebhook"];
            };
        };
        responses: {
            /** @description Made; the answer holds its secret. */
            201: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description `bad_request`: not JSON of this shape, a URL the rules refuse (the message says which rule), an unknown or unoffered topic, a date that is not a real `YYYY-MM-DD`. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `limit_reached`: the key has as many endpoints as its plan allows. */
            409: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description `body_not_accepted`: a body over 8 KiB. */
            413: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_read: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_remove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_rotate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint with its new secret. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_test: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description What the ping came to. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookTest"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_deliveries: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The deliveries. */
            200: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveries"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_replay: {
        parameters: {
            query: {
                /** @description A position of the log: an event's `seq`, or an HTTP answer's `Racing-Seq`. */
                since: number;
            };
            header?: never;
            path: {
                /** @description The endpoint's id, `ep_...`. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Asked; the endpoint as it is now. */
            202: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description `bad_request`: no `since`, one that is not a stream sequence or is past the log, or another query parameter. */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            /** @description `not_found`: no endpoint of that id for this key. */
            404: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    openapi_json: {
        parameters: {
            query?: never;
            header?: {
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            304: components["responses"]["NotModified"];
            /** @description A query parameter (there are none). */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    docs_page: {
        parameters: {
            query?: never;
            header?: {
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The HTML page. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            304: components["responses"]["NotModified"];
            /** @description A query parameter (there are none). */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    asyncapi_json: {
        parameters: {
            query?: never;
            header?: {
                /** @description The `ETag` of a copy the client holds: 304 with no body while it is still current. */
                "If-None-Match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The AsyncAPI 3.0 document. */
            200: {
                headers: {
                    /** @description `private, no-cache`: keep a copy, but revalidate before each use (results can be amended at any time). A document `as_of` a point of the log never changes: `private, max-age=31536000, immutable`. */
                    "Cache-Control"?: string;
                    /** @description Strong validator of the body (a quoted 128-bit hash). Send it back in `If-None-Match` to get 304 while the document is unchanged. */
                    ETag?: string;
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            304: components["responses"]["NotModified"];
            /** @description A query parameter (there are none). */
            400: {
                headers: {
                    /** @description What is left of the key's quota: `"default";r=REMAINING;t=SECONDS` until it is full again (draft-ietf-httpapi-ratelimit-headers-08). */
                    RateLimit?: string;
                    /** @description The key's quota: `"default";q=BURST;w=WINDOW` (BURST requests per WINDOW seconds). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            401: components["responses"]["Unauthorized"];
            405: components["responses"]["MethodNotAllowed"];
            413: components["responses"]["BodyNotAccepted"];
            414: components["responses"]["UriTooLong"];
            429: components["responses"]["RateLimited"];
            431: components["responses"]["HeadersTooLarge"];
            500: components["responses"]["Internal"];
            503: components["responses"]["Unavailable"];
        };
    };
    webhook_race_day_event: {
        parameters: {
            query?: never;
            header: {
                /** @description `msg_{endpoint}_{seq}`: the same on every attempt and replay of an event to an endpoint; a receiver keeps the ids it has taken, to take each event once. */
                "webhook-id": string;
                /** @description When this attempt was signed, in Unix seconds; refuse one more than five minutes from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint's secret (base64 after `whsec_`); two during the 24 hours after a rotation. Compare in constant time. */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    type: "result";
                    /** @description The event's position in the log (its `Racing-Seq`). */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When JetStream stored the event.
                     */
                    published_at: string;
                    data: components["schemas"]["ResultFrame"];
                } | {
                    /** @enum {string} */
                    type: "status";
                    /** @description The event's position in the log (its `Racing-Seq`). */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When JetStream stored the event.
                     */
                    published_at: string;
                    data: components["schemas"]["StatusFrame"];
                } | {
                    /** @enum {string} */
                    type: "scratching";
                    /** @description The event's position in the log (its `Racing-Seq`). */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When JetStream stored the event.
                     */
                    published_at: string;
                    data: components["schemas"]["ScratchingFrame"];
                } | {
                    /** @enum {string} */
                    type: "card";
                    /** @description The event's position in the log (its `Racing-Seq`). */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When JetStream stored the event.
                     */
                    published_at: string;
                    data: components["schemas"]["CardFrame"];
                } | {
                    /** @enum {string} */
                    type: "retraction";
                    /** @description The event's position in the log (its `Racing-Seq`). */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When JetStream stored the event.
                     */
                    published_at: string;
                    data: components["schemas"]["RetractionFrame"];
                };
            };
        };
        responses: {
            /** @description Gone: the endpoint is disabled and sent nothing more. */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Taken: the next event follows. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Anything else, or no answer within 15 seconds, is a failure: the same delivery is attempted again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (later where a 429 or 503 says `Retry-After`), and the endpoint is disabled, and its owner told by mail, after the last. Events after it wait: an endpoint is sent in `seq` order. */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    webhook_ping: {
        parameters: {
            query?: never;
            header: {
                /** @description `msg_{endpoint}_{seq}`: the same on every attempt and replay of an event to an endpoint; a receiver keeps the ids it has taken, to take each event once. */
                "webhook-id": string;
                /** @description When this attempt was signed, in Unix seconds; refuse one more than five minutes from your clock. */
                "webhook-timestamp": string;
                /** @description Space-separated `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` with the endpoint's secret (base64 after `whsec_`); two during the 24 hours after a rotation. Compare in constant time. */
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    type: "ping";
                    /** @description The log's position when it was sent. */
                    seq: number;
                    /**
                     * Format: date-time
                     * @description When it was sent.
                     */
                    published_at: string;
                    data: {
                        /** @description The endpoint's id. */
                        endpoint: string;
                        /** @description Its URL. */
                        url: string;
                    };
                };
            };
        };
        responses: {
            /** @description Answered. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
