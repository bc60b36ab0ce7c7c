"""The API's documents and the live stream's frames, as typed dataclasses.

Each document class has the properties of the `/openapi.json` schema of the same name, in
its order (`class` and `from`, Python keywords, are `class_` and `from_`); the tests check
every schema against these classes, so a field the API gains without the client fails
them. A field the service leaves out where the feed did not give it is `None` here.
Dates are `datetime.date`; instants (`published_at`, `occurred_at`, `status_at`) stay the
text the service sent: RFC 3339 in UTC with `Z`, to the millisecond.

The classes are in one module per family, each importing from the modules it builds on:
`_base` (`Model`, `Document`, `Meta`, `RateLimit` and the helpers they share), `index`,
`horses`, `races` (results, race cards, meetings), `odds`, `people` (jockeys and
trainers), `analysis`, `changes` (the change feed), `errors` (`ErrorBody`), `webhooks`
and `frames` (the live stream's, with `parse_timestamp`). Import them from here,
`racing_client.models`, or from `racing_client`: the modules are the code's layout, not
its interface.
"""

from ._base import Document, Meta, Model, RateLimit
from .index import ApiEndpoint, ApiIndex
from .horses import Form, FormEntry, HorseMatch, HorseSearch, Profile
from .races import (
    CardRace,
    CardRunner,
    GoingRecord,
    MeetingRow,
    Meetings,
    RaceCard,
    RaceResult,
    Record,
    ResultRace,
    ResultRunner,
    ResultsByDate,
    RunnerForm,
    Strike,
)
from .odds import (
    Book,
    Market,
    OddsHistory,
    OddsMove,
    RaceOdds,
    RunnerMarket,
    RunnerOdds,
    odds_frame,
)
from .people import JockeyList, PersonRecord, PersonRow, RideDoc, SeasonDoc, TrainerList
from .analysis import Analysis, Figures, NumberRow, Row
from .changes import Change, Changes
from .errors import ErrorBody
from .webhooks import (
    NewWebhook,
    PendingDelivery,
    Webhook,
    WebhookAttempt,
    WebhookDeliveries,
    WebhookList,
    WebhookTest,
)
from .frames import (
    CardFrame,
    Frame,
    Heartbeat,
    MarketUpdate,
    OddsUpdate,
    RaceResultFrame,
    Retraction,
    Scratching,
    Snapshot,
    StatusChange,
    StreamFrame,
    parse_timestamp,
)

__all__ = [
    "RateLimit",
    "Meta",
    "Model",
    "Document",
    "ApiEndpoint",
    "ApiIndex",
    "HorseMatch",
    "HorseSearch",
    "Profile",
    "FormEntry",
    "Form",
    "ResultRunner",
    "ResultRace",
    "ResultsByDate",
    "RaceResult",
    "Record",
    "GoingRecord",
    "Strike",
    "RunnerForm",
    "CardRunner",
    "CardRace",
    "RaceCard",
    "MeetingRow",
    "Meetings",
    "RunnerOdds",
    "RunnerMarket",
    "Market",
    "Book",
    "RaceOdds",
    "OddsMove",
    "OddsHistory",
    "odds_frame",
    "PersonRow",
    "JockeyList",
    "TrainerList",
    "SeasonDoc",
    "RideDoc",
    "PersonRecord",
    "Figures",
    "Row",
    "NumberRow",
    "Analysis",
    "Change",
    "Changes",
    "ErrorBody",
    "NewWebhook",
    "Webhook",
    "WebhookList",
    "WebhookTest",
    "PendingDelivery",
    "WebhookAttempt",
    "WebhookDeliveries",
    "Snapshot",
    "StreamFrame",
    "OddsUpdate",
    "MarketUpdate",
    "StatusChange",
    "Scratching",
    "RaceResultFrame",
    "CardFrame",
    "Retraction",
    "Heartbeat",
    "parse_timestamp",
    "Frame",
]
