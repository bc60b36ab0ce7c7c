// Generated from the service's /asyncapi.json by tools/generate.mjs;
// do not edit: run `npm run generate` after a document changes in Rust.
// test/types.test.mjs holds this file equal to what the service serves.

export type paths = Record<string, never>;
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description The first frame of a connection: the latest position relayed and the heartbeat interval.
         *     The connection starts subscribed to every race.
         */
        WelcomeFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "welcome";
            /**
             * Format: int64
             * @description The latest position relayed (an odds update's or a race-day event's) when the
             *     connection opened.
             */
            seq: number;
            /**
             * Format: int64
             * @description Milliseconds without other traffic after which a `heartbeat` is sent.
             */
            heartbeat_ms: number;
        };
        /**
         * @description The current odds of a race: the `RaceOdds` document with a `type` in front, one for
         *     each venue that runs the race (`venue` null where none is known yet), sent before any
         *     `odds` frame of that race, in answer to a `subscribe` or in place of updates a slow
         *     client fell behind on.
         */
        SnapshotFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "snapshot";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse whose race this is; `null` while no venue of the race is known. */
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
             * @description Stream sequence of the latest odds update of the race: resume with `since` from
             *     here.
             */
            seq: number;
            /** @description The race's status, once a status event was given for it. */
            status?: components["schemas"]["RaceStatus"];
            /**
             * Format: date-time
             * @description When the status was given (the event's `occurred_at`), with `status`.
             */
            status_at?: string;
            /** @description Why, where the status event said. */
            status_reason?: string;
            /** @description Every runner with a price, in horse-number order, those scratched marked. */
            odds: components["schemas"]["RunnerMarket"][];
            /** @description The market these prices make; left out of the snapshot of a race with no prices. */
            market?: components["schemas"]["Market"];
        };
        /**
         * @description Where the race stands: open, suspended, off, finished, abandoned or void.
         * @enum {string}
         */
        RaceStatus: "open" | "suspended" | "off" | "finished" | "abandoned" | "void";
        /**
         * @description A runner's prices with what the market reads of them, as the `RaceOdds` document's
         *     `odds` lists them (`docs/api.md`, "The market").
         */
        RunnerMarket: {
            /** @description Brand number. */
            horse_no: string;
            /**
             * @description `true` for a runner scratched from the race: it keeps its last prices, and the
             *     books, the favourites and the movers leave it out. Left out for a runner that can
             *     still run.
             */
            scratched?: boolean;
            /**
             * Format: double
             * @description Decimal win odds, stake included (at least 1.0), where the runner has one.
             */
            win_odds?: number;
            /**
             * Format: double
             * @description Decimal place odds, stake included (at least 1.0), where the runner has one.
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
             * @description The win price's move since `first_win_odds`, in percent of it (below 0:
             *     shortened).
             */
            win_move_pct?: number;
            /**
             * Format: double
             * @description The win price's move since the start of the clock's minute less 15 minutes, in
             *     percent.
             */
            win_move_15m_pct?: number;
            /**
             * Format: double
             * @description The same over the last 5 minutes.
             */
            win_move_5m_pct?: number;
        };
        /** @description The market of a race's current prices: the `RaceOdds` document's `market`. */
        Market: {
            /**
             * Format: date-time
             * @description The market's clock: the latest `occurred_at` of the race's price moves, in UTC.
             */
            clock?: string;
            /**
             * Format: double
             * @description The win market's book: the sum of 1 / win odds over the runners not scratched, in
             *     percent.
             */
            win_book_pct?: number;
            /**
             * Format: double
             * @description The place market's book, the same over place odds.
             */
            place_book_pct?: number;
            /** @description The runners not scratched with the shortest win price. */
            favourites: string[];
            /**
             * @description The runners not scratched whose win price shortened most over the last 15
             *     minutes, at most 3.
             */
            steamers: string[];
            /**
             * @description The runners not scratched whose win price lengthened most over the last 15
             *     minutes, at most 3.
             */
            drifters: string[];
        };
        /**
         * @description One odds update: `seq` is its stream sequence, strictly increasing on a connection
         *     among live frames; `odds` lists only the changed prices. A `replay` plays recorded
         *     updates back as these same frames, marked `"replay":true`.
         */
        OddsFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "odds";
            /** @description Present (and true) only on a frame a `replay` plays back. */
            replay?: boolean;
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * @description The update's racecourse; `null` for one given without a venue, which is for the
             *     race of that number at every venue of the date.
             */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the update.
             */
            seq: number;
            /**
             * Format: date-time
             * @description When JetStream stored the update (UTC, to the millisecond): when it was published.
             */
            published_at: string;
            /**
             * Format: date-time
             * @description When the prices were given at their source: the event's `occurred_at` (UTC, to
             *     the millisecond, whatever offset the feeder wrote). For a past race's recorded moves,
             *     published later, this is the race's time and `published_at` the publishing's.
             */
            occurred_at: string;
            /** @description The changed prices, as the feed gave them. */
            odds: components["schemas"]["RunnerPrice"][];
            /** @description The book of the race's prices after the update. */
            market: components["schemas"]["Book"];
        };
        /** @description A runner's prices: at least one of `win_odds` and `place_odds`. */
        RunnerPrice: {
            /** @description Brand number. */
            horse_no: string;
            /**
             * Format: double
             * @description Decimal win odds, stake included (at least 1.0). Left out only where a place
             *     price is given alone.
             */
            win_odds?: number;
            /**
             * Format: double
             * @description Decimal place odds, stake included (at least 1.0), where the runner was given one.
             */
            place_odds?: number;
        };
        /** @description The book of a race after an odds update: what its `odds` frame's `market` carries. */
        Book: {
            /**
             * Format: double
             * @description The win market's book after the update: the sum of 1 / win odds over every runner
             *     with a win price that is not scratched, in percent, 2 decimal places.
             */
            win_book_pct?: number;
            /**
             * Format: double
             * @description The place market's book, the same over place odds.
             */
            place_book_pct?: number;
            /** @description The runners not scratched with the shortest win price after the update. */
            favourites: string[];
        };
        /**
         * @description A race's market, at most once a second while its prices move (topic `market`): its
         *     current odds document's market and runners, conflated (a client is sent the market as
         *     it stands, never a queue of the moves between).
         */
        MarketFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "market";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /** @description Racecourse whose race this is; `null` while no venue of the race is known. */
            venue: string | null;
            /**
             * Format: int32
             * @description Race within the meeting, 1 to 99.
             */
            race_number: number;
            /**
             * Format: int64
             * @description Stream sequence of the latest odds update of the race.
             */
            seq: number;
            /** @description The market. */
            market: components["schemas"]["Market"];
            /**
             * @description Every runner with a price and its moves, in horse-number order, those scratched
             *     marked.
             */
            odds: components["schemas"]["RunnerMarket"][];
        };
        /** @description A race's status changed (topic `status`). */
        StatusFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
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
        /** @description A runner was scratched (topic `scratchings`). */
        ScratchingFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
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
        /** @description A race's result was published or amended (topic `results`). */
        ResultFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
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
        /** @description A race was declared or its card amended (topic `cards`). */
        CardFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
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
        /** @description A race's result or card was retracted (topics `results` and `cards`). */
        RetractionFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
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
        /** @description Sent after `heartbeat_ms` without other traffic. */
        HeartbeatFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "heartbeat";
            /**
             * Format: int64
             * @description The latest position relayed (an odds update's or a race-day event's).
             */
            seq: number;
        };
        /** @description The answer to a `ping`: every frame queued before it has been sent. */
        PongFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "pong";
        };
        /** @description A replay is over, after `moves` frames; `stopped` if `replay_stop` ended it. */
        ReplayEndFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "replay_end";
            /**
             * Format: date
             * @description The date replayed, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * Format: int32
             * @description The race replayed; `null` for the whole meeting.
             */
            race_number: number | null;
            /**
             * Format: int64
             * @description How many `odds` frames the replay sent.
             */
            moves: number;
            /** @description Whether `replay_stop` ended it. */
            stopped: boolean;
        };
        /** @description A client message the server did not act on; the connection stays open. */
        ErrorFrame: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "error";
            /**
             * @description What went wrong: `bad_request`, `frame_too_large`, `too_many_subscriptions`,
             *     `not_subscribed`, `replay_running`, `not_replaying` or `rate_limited`.
             */
            error: string;
            /** @description The same in words, for a person. */
            message: string;
        };
        /**
         * @description Follow a meeting, or one race of it. The first subscribe replaces the starting
         *     everything-subscription; later ones add, and one for a target already followed sets
         *     its topics. Without `since`, answered by a `snapshot` of each race it names (topic
         *     `odds`); with `since`, every update after it for what it names, then live.
         */
        Subscribe: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "subscribe";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99; the whole meeting if left out.
             */
            race_number?: number;
            /**
             * Format: int64
             * @description Resume after this stream sequence (a frame's `seq`, or an HTTP answer's
             *     `Racing-Seq`), with no gap and no duplicate.
             */
            since?: number;
            /** @description What to follow of the target; `["odds"]` if left out. */
            topics?: components["schemas"]["Topic"][];
            /**
             * Format: int64
             * @description 0 to 120,000: the odds moves of a race within this many milliseconds go out as one
             *     `odds` frame holding each runner's latest prices, with the `seq` and the book of
             *     the last move it covers (the first move after a quiet window goes at once); at most
             *     one such frame a race a window. 0 (the default) sends every move. Race-day frames
             *     are never conflated. With it, a `since` sends the odds as a snapshot.
             */
            conflate_ms?: number;
        };
        /**
         * @description What a `subscribe` follows; `odds` when no `topics` are given.
         * @enum {string}
         */
        Topic: "odds" | "status" | "scratchings" | "results" | "cards" | "market";
        /** @description Stop following a meeting, or one race of it. */
        Unsubscribe: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "unsubscribe";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99; the whole meeting if left out.
             */
            race_number?: number;
            /**
             * @description Only these topics stop; the subscription goes when none is left. All of it if left
             *     out.
             */
            topics?: components["schemas"]["Topic"][];
        };
        /** @description Answered by `pong` once every frame queued before it has gone out. */
        Ping: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "ping";
        };
        /**
         * @description Play back a date's recorded odds (of one race if `race_number` is given) as `odds`
         *     frames marked `"replay":true`, at the pace their prices were given (`occurred_at`)
         *     divided by `speed`, then `replay_end`. One replay at a time per connection.
         */
        Replay: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "replay";
            /**
             * Format: date
             * @description Meeting date, `YYYY-MM-DD`.
             */
            date: string;
            /**
             * Format: int64
             * @description Race within the meeting, 1 to 99; the whole meeting if left out.
             */
            race_number?: number;
            /**
             * Format: double
             * @description How many times faster than the prices were given: 1 to 100, fractions allowed; 1
             *     if left out.
             */
            speed?: number;
        };
        /** @description End the replay under way (its `replay_end` has `"stopped":true`). */
        ReplayStop: {
            /**
             * @description Which message this is.
             * @enum {string}
             */
            type: "replay_stop";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
