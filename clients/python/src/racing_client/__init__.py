"""Python client of the racing data service: typed documents, polite by default, and a
live stream of odds and the race day that resumes by itself. See README.md beside this package."""

from . import models as _models
from ._core import Call, Settings, __version__
from .aio import AsyncRacing
from .client import Racing
from .errors import (
    ApiError,
    BadRequest,
    ConfigurationError,
    ConnectionFailed,
    DecodeError,
    LiveError,
    NotFound,
    RacingError,
    RateLimited,
    ServerError,
    Unauthorized,
    Unavailable,
)
from . import webhooks
from .live import TOPICS, LiveStream, Target
from .webhooks import WebhookVerificationError
from .models import *  # noqa: F403 - the documents are the package's vocabulary

__all__ = [
    "AsyncRacing",
    "Racing",
    "LiveStream",
    "Target",
    "TOPICS",
    "Call",
    "Settings",
    "__version__",
    "RacingError",
    "ApiError",
    "BadRequest",
    "ConfigurationError",
    "ConnectionFailed",
    "DecodeError",
    "LiveError",
    "NotFound",
    "RateLimited",
    "ServerError",
    "Unauthorized",
    "Unavailable",
    "WebhookVerificationError",
    "webhooks",
    *_models.__all__,
]
