// Generated from the service's /openapi.json and /asyncapi.json by tools/generate.mjs;
// do not edit: run `npm run generate` after a document changes in Rust.
// test/types.test.mjs holds this file equal to what the service serves.

// A name for each schema: the API's documents, then the socket's frames and messages.

import type { components } from "./openapi.js";

export type Analysis = components["schemas"]["Analysis"];
export type ApiEndpoint = components["schemas"]["ApiEndpoint"];
export type ApiIndex = components["schemas"]["ApiIndex"];
export type Book = components["schemas"]["Book"];
export type CardFrame = components["schemas"]["CardFrame"];
export type CardRace = components["schemas"]["CardRace"];
export type CardRunner = components["schemas"]["CardRunner"];
export type Change = components["schemas"]["Change"];
export type Changes = components["schemas"]["Changes"];
export type ErrorBody = components["schemas"]["ErrorBody"];
export type ErrorCode = components["schemas"]["ErrorCode"];
export type Figures = components["schemas"]["Figures"];
export type Form = components["schemas"]["Form"];
export type FormEntry = components["schemas"]["FormEntry"];
export type GoingRecord = components["schemas"]["GoingRecord"];
export type HorseMatch = components["schemas"]["HorseMatch"];
export type HorseSearch = components["schemas"]["HorseSearch"];
export type JockeyList = components["schemas"]["JockeyList"];
export type Market = components["schemas"]["Market"];
export type MeetingRow = components["schemas"]["MeetingRow"];
export type Meetings = components["schemas"]["Meetings"];
export type NewWebhook = components["schemas"]["NewWebhook"];
export type NumberRow = components["schemas"]["NumberRow"];
export type OddsHistory = components["schemas"]["OddsHistory"];
export type OddsMove = components["schemas"]["OddsMove"];
export type PendingDelivery = components["schemas"]["PendingDelivery"];
export type PersonRecord = components["schemas"]["PersonRecord"];
export type PersonRow = components["schemas"]["PersonRow"];
export type Profile = components["schemas"]["Profile"];
export type RaceCard = components["schemas"]["RaceCard"];
export type RaceOdds = components["schemas"]["RaceOdds"];
export type RaceResult = components["schemas"]["RaceResult"];
export type RaceStatus = components["schemas"]["RaceStatus"];
export type Record = components["schemas"]["Record"];
export type ResultFrame = components["schemas"]["ResultFrame"];
export type ResultRace = components["schemas"]["ResultRace"];
export type ResultRunner = components["schemas"]["ResultRunner"];
export type ResultsByDate = components["schemas"]["ResultsByDate"];
export type RetractionFrame = components["schemas"]["RetractionFrame"];
export type RideDoc = components["schemas"]["RideDoc"];
export type Row = components["schemas"]["Row"];
export type RunnerForm = components["schemas"]["RunnerForm"];
export type RunnerMarket = components["schemas"]["RunnerMarket"];
export type RunnerOdds = components["schemas"]["RunnerOdds"];
export type ScratchingFrame = components["schemas"]["ScratchingFrame"];
export type SeasonDoc = components["schemas"]["SeasonDoc"];
export type StatusFrame = components["schemas"]["StatusFrame"];
export type Strike = components["schemas"]["Strike"];
export type TrainerList = components["schemas"]["TrainerList"];
export type Webhook = components["schemas"]["Webhook"];
export type WebhookAttempt = components["schemas"]["WebhookAttempt"];
export type WebhookDeliveries = components["schemas"]["WebhookDeliveries"];
export type WebhookList = components["schemas"]["WebhookList"];
export type WebhookTest = components["schemas"]["WebhookTest"];

import type { components as socket } from "./asyncapi.js";

export type ErrorFrame = socket["schemas"]["ErrorFrame"];
export type HeartbeatFrame = socket["schemas"]["HeartbeatFrame"];
export type MarketFrame = socket["schemas"]["MarketFrame"];
export type OddsFrame = socket["schemas"]["OddsFrame"];
export type Ping = socket["schemas"]["Ping"];
export type PongFrame = socket["schemas"]["PongFrame"];
export type Replay = socket["schemas"]["Replay"];
export type ReplayEndFrame = socket["schemas"]["ReplayEndFrame"];
export type ReplayStop = socket["schemas"]["ReplayStop"];
export type RunnerPrice = socket["schemas"]["RunnerPrice"];
export type SnapshotFrame = socket["schemas"]["SnapshotFrame"];
export type Subscribe = socket["schemas"]["Subscribe"];
export type Topic = socket["schemas"]["Topic"];
export type Unsubscribe = socket["schemas"]["Unsubscribe"];
export type WelcomeFrame = socket["schemas"]["WelcomeFrame"];
