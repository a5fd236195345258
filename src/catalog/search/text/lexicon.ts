// The software vocabulary that general English resources lack (WordNet has no "download" ≈
// "fetch", no "repo" ≈ "repository", no "md" ≈ "markdown"): intent verbs of tools, the things
// tools act on, and file formats, in English and Spanish. A query word expands to the other
// members of its classes at a reduced weight, so "download" still finds a tool described as
// "fetch", while a tool that says "download" itself ranks higher. Classes are not merged into one
// canonical term on purpose: "get" appears in thousands of tool names and must not make every
// getter a perfect match for "download".
//
// Everyday-capability classes (trending/popular, buy/shop, remember/memory, nearby, ...) that were
// added while tuning on LiveMCPBench were removed: on requests they were not written for they
// measured no gain (docs/discovery.md, "Generalise"). General English relations come from WordNet
// instead (wordnet.ts). The shell's file commands (ls, cat, mv, rm, mkdir) are words of the
// software vocabulary too: people type them as verbs ("ls ~/Downloads", "mv a.js lib/a.js").
// "stat" is not among them: the stemmer makes "statement" stat too. "drop" and "wipe" delete in
// that vocabulary (SQL's DROP, wiping a disk) as they do in everyday requests ("drop that note").
// "record" is not a write word: in that vocabulary and in requests it is mostly a thing, an entry
// ("fetch the Acme record", "update her record"), and it had sent those to write_file.
import { stem } from "./stem.js";
import { foldText } from "./tokenize.js";

export const SYNONYM_CLASSES: ReadonlyArray<readonly string[]> = [
  ["fetch", "get", "retrieve", "download", "obtain", "pull", "descargar", "obtener", "bajar"],
  ["send", "post", "publish", "submit", "deliver", "enviar", "mandar", "publicar"],
  ["delete", "remove", "erase", "destroy", "purge", "unlink", "forget", "rm", "drop", "wipe", "discard", "eliminar", "borrar", "quitar", "olvidar"],
  ["create", "add", "new", "make", "generate", "insert", "crear", "agregar", "añadir", "nuevo", "generar"],
  ["list", "enumerate", "browse", "ls", "listar", "enumerar"],
  ["find", "search", "query", "lookup", "look", "locate", "seek", "discover", "buscar", "busqueda", "encontrar", "consultar"],
  ["repo", "repository", "repositorio", "codebase"],
  ["update", "edit", "modify", "change", "patch", "alter", "actualizar", "editar", "modificar", "cambiar"],
  ["read", "view", "show", "display", "open", "inspect", "print", "cat", "leer", "ver", "mostrar", "abrir"],
  ["write", "save", "store", "persist", "guardar", "escribir", "almacenar"],
  ["run", "execute", "exec", "invoke", "launch", "trigger", "ejecutar", "lanzar"],
  ["file", "archivo", "fichero"],
  ["folder", "directory", "dir", "mkdir", "carpeta", "directorio"],
  ["move", "rename", "relocate", "mv", "mover", "renombrar"],
  ["metadata", "info", "metadatos"],
  ["document", "doc", "documento"],
  ["image", "picture", "photo", "img", "png", "jpg", "jpeg", "imagen", "foto"],
  ["video", "movie", "clip", "mp4", "pelicula"],
  ["audio", "sound", "mp3", "wav", "sonido"],
  ["music", "song", "track", "musica", "cancion"],
  ["web", "webpage", "website", "url", "site", "pagina", "sitio"],
  ["database", "db", "datastore", "basedatos"],
  ["email", "mail", "correo"],
  ["message", "msg", "chat", "mensaje"],
  ["translate", "translation", "traducir", "traduccion"],
  ["summarize", "summary", "resumir", "resumen"],
  ["calendar", "schedule", "agenda", "event", "meeting", "appointment", "calendario", "evento", "reunion"],
  ["location", "place", "address", "ubicacion", "lugar", "direccion"],
  ["price", "cost", "pricing", "precio", "costo"],
  ["stock", "ticker", "equity"],
  ["chart", "graph", "plot", "diagram", "visualize", "visualization", "grafico"],
  ["convert", "transform", "convertir"],
  ["user", "account", "profile", "usuario", "cuenta"],
  ["issue", "ticket", "bug"],
  ["news", "headline", "noticia", "noticias"],
  ["note", "memo", "nota"],
  ["task", "todo", "tarea"],
  ["command", "shell", "terminal", "cli", "comando"],
  // File formats name the kind of document a tool works on.
  ["spreadsheet", "excel", "sheet", "xlsx", "csv", "hoja"],
  ["word", "docx"],
  ["presentation", "slide", "powerpoint", "ppt", "pptx", "diapositiva"],
  ["markdown", "md"],
  ["html", "htm"],
  ["screenshot", "capture", "captura"],
  ["paper", "article", "publication", "articulo"],
  ["weather", "forecast", "clima"],
  ["map", "geocode", "mapa"],
  ["analyze", "analysis", "analyse", "analizar", "analisis"],
  ["code", "source", "codigo"],
  ["pdf", "document"],
];

const EXPANSIONS: ReadonlyMap<string, readonly string[]> = (() => {
  const byStem = new Map<string, Set<string>>();
  for (const cls of SYNONYM_CLASSES) {
    const stems = [...new Set(cls.map((w) => stem(foldText(w))))];
    for (const s of stems) {
      let set = byStem.get(s);
      if (!set) byStem.set(s, (set = new Set()));
      for (const other of stems) if (other !== s) set.add(other);
    }
  }
  const out = new Map<string, readonly string[]>();
  for (const [s, set] of byStem) out.set(s, [...set].sort());
  return out;
})();

/** Whether a word (as written) belongs to a class of the software vocabulary. */
export function inLexiconClass(word: string): boolean {
  return synonymsOf(stem(foldText(word))).length > 0;
}

/** Stems of the synonyms of a stem (never including itself), sorted. */
export function synonymsOf(termStem: string): readonly string[] {
  return EXPANSIONS.get(termStem) ?? [];
}
