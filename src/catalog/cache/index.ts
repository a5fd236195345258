// The catalogue cache: each server's last listing (tools, resources, prompts) as the catalogue
// keeps it (listing.ts), and on disk under `<dataDir>/catalog/` (store.ts), so discovery answers
// before any downstream runs.
export { makeListing, type ServerListing } from "./listing.js";
export { CatalogCache } from "./store.js";
