// The file-system helpers moved to the store (src/store/files/fsutil.ts), which owns every file
// several processes share; the vault keeps this name for the local files it still writes itself
// (the key file) and for existing callers.
export * from "../store/files/fsutil.js";
