//! The checked-in types of src/generated, rendered from the service's own documents:
//! `/openapi.json` with openapi-typescript, the JSON Schemas of `/asyncapi.json` the same
//! way (wrapped as an OpenAPI document's components, which is what they are), and a name
//! for each schema. The generator and the test that holds the files equal to a running
//! service both call this.

import openapiTS, { astToString } from "openapi-typescript";

/** Where each rendered file is checked in, relative to the package. */
export const FILES = {
  openapi: "src/generated/openapi.ts",
  asyncapi: "src/generated/asyncapi.ts",
  names: "src/generated/names.ts",
};

function header(source) {
  return (
    `// Generated from the service's ${source} by tools/generate.mjs;\n` +
    "// do not edit: run `npm run generate` after a document changes in Rust.\n" +
    "// test/types.test.mjs holds this file equal to what the service serves.\n\n"
  );
}

/** The schemas a caller names: objects (documents, frames, messages) and enumerations
 * (`RaceStatus`, `ErrorCode`, `Topic`), not the parameters' patterns (`Date`, `HorseNo`). */
function named(schemas) {
  return Object.keys(schemas)
    .filter((name) => schemas[name].type === "object" || schemas[name].enum !== undefined)
    .sort();
}

/** `export type Name = schemas["Name"];` for each name. Not openapi-typescript's
 * `rootTypes`: it declares them beside `components`, where a schema named `Record` hides
 * the `Record<K, V>` that file uses. */
function aliases(module, names) {
  const lines = names.map((name) => `export type ${name} = components["schemas"]["${name}"];\n`);
  return `import type { components } from "./${module}.js";\n\n` + lines.join("");
}

/** The text of each file of `FILES`, from the two documents as parsed JSON. */
export async function render(openapi, asyncapi) {
  // The AsyncAPI document's payload schemas, as an OpenAPI 3.1 document's components:
  // the same JSON Schema dialect, and their `$ref`s (`#/components/schemas/X`) resolve
  // there unchanged.
  const frames = {
    openapi: "3.1.0",
    info: { title: asyncapi.info.title, version: asyncapi.info.version },
    paths: {},
    components: { schemas: asyncapi.components.schemas },
  };
  const options = { silent: true };
  const documents = named(openapi.components.schemas);
  // A schema of both (a result inside a `result` frame) is named by the API's.
  const socket = named(asyncapi.components.schemas).filter((name) => !documents.includes(name));
  return {
    openapi: header("/openapi.json") + astToString(await openapiTS(openapi, options)),
    asyncapi: header("/asyncapi.json") + astToString(await openapiTS(frames, options)),
    names:
      header("/openapi.json and /asyncapi.json") +
      "// A name for each schema: the API's documents, then the socket's frames and messages.\n\n" +
      aliases("openapi", documents) +
      "\n" +
      aliases("asyncapi", socket)
        .replace("import type { components }", "import type { components as socket }")
        .replaceAll("components[", "socket["),
  };
}
