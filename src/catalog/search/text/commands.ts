// Shell commands said as requests ("mkdir -p ~/dev/tracker", "ls -lS assets", "stat db.sqlite"):
// a command name is no English word, so nothing in a tool's text matches it. Each is read as
// the one-line description its manual page gives in its NAME section (GNU coreutils, gzip,
// grep, sed, gawk, wget): an external, fixed text, not words chosen for a catalogue. Only names
// WordNet does not know are here ("cat", "find", "touch", "head" are English words and stay
// so), and only a name that starts the request as a command starts a shell line (after a
// "sudo"): not a part of a path or a file name, nor a subcommand ("git diff").

const COMMANDS: Readonly<Record<string, string>> = {
  ls: "list directory contents",
  mkdir: "make directories",
  rmdir: "remove empty directories",
  rm: "remove files or directories",
  cp: "copy files and directories",
  pwd: "print name of current working directory",
  chmod: "change file mode bits",
  chown: "change file owner and group",
  du: "estimate file space usage",
  df: "report file system disk space usage",
  wc: "print newline, word, and byte counts for each file",
  grep: "print lines that match patterns",
  ln: "make links between files",
  stat: "display file or file system status",
  printenv: "print all or part of environment",
  gzip: "compress or expand files",
  gunzip: "compress or expand files",
  diff: "compare files line by line",
  uniq: "report or omit repeated lines",
  wget: "the non-interactive network downloader",
  sed: "stream editor for filtering and transforming text",
  awk: "pattern scanning and processing language",
  basename: "strip directory and suffix from filenames",
  dirname: "strip last component from file name",
  realpath: "print the resolved path",
  readlink: "print resolved symbolic links or canonical file names",
};

/**
 * The request with the shell command name it starts with replaced by its manual's description,
 * or followed by it where `known` says the catalogue holds the name itself (a tool named
 * "gzip-file-as-resource"); the request itself when it says none.
 */
export function readCommands(query: string, known: (word: string) => boolean = () => false): string {
  if (!/[a-z]/iu.test(query)) return query;
  const parts = query.split(/(\s+)/u);
  // A shell line starts with its command ("sudo" runs the next): "git diff" is git's, not diff's.
  let at = parts.findIndex((p) => p.trim().length > 0);
  if (parts[at]?.toLowerCase() === "sudo") at += 2;
  const chunk = parts[at];
  const name = chunk?.toLowerCase() ?? "";
  const description = COMMANDS[name];
  if (chunk === undefined || description === undefined) return query;
  parts[at] = known(name) ? `${chunk} ${description}` : description;
  return parts.join("");
}
