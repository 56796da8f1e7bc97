// A small POSIX-shell word splitter, so rules match commands whatever separates their words:
// spaces, tabs, line continuations, quotes and inline comments.

const SPACE: i32 = 0x20;
const TAB: i32 = 0x09;
const LF: i32 = 0x0a;
const CR: i32 = 0x0d;
const BACKSLASH: i32 = 0x5c;
const SINGLE_QUOTE: i32 = 0x27;
const DOUBLE_QUOTE: i32 = 0x22;
const HASH: i32 = 0x23;
const SLASH: i32 = 0x2f;
const DASH: i32 = 0x2d;
const EQUALS: i32 = 0x3d;

function isBlank(c: i32): bool {
  return c == SPACE || c == TAB || c == CR;
}

/** `;`, `&`, `|`, `(`, `)` and a new line end a simple command. */
function isCommandSeparator(c: i32): bool {
  return c == 0x3b || c == 0x26 || c == 0x7c || c == 0x28 || c == 0x29 || c == LF;
}

// What each ASCII character is to the splitter; every other character is plain.
const PLAIN: u8 = 0;
const BLANK: u8 = 1;
const SEPARATOR: u8 = 2;
const SPECIAL: u8 = 3; // a backslash or a quote

function classTable(): usize {
  const table = memory.data(128);
  for (let c = 0; c < 128; c++) {
    store<u8>(table + c, isBlank(c) ? BLANK : isCommandSeparator(c) ? SEPARATOR : c == BACKSLASH || c == SINGLE_QUOTE || c == DOUBLE_QUOTE ? SPECIAL : PLAIN);
  }
  return table;
}

const CLASSES: usize = classTable();

// @ts-ignore: decorator
@inline
function classOf(c: i32): u8 {
  return c < 128 ? load<u8>(CLASSES + c) : PLAIN;
}

// @ts-ignore: decorator
@inline
function unitAt(line: string, i: i32): i32 {
  return <i32>load<u16>(changetype<usize>(line) + (<usize>i << 1));
}

/**
 * The simple commands of a shell command line, each as its words with quotes removed:
 * `sudo  rm\t-rf \\\n / # gone` gives [["sudo", "rm", "-rf", "/"]]. Plain runs of characters are
 * taken as one substring, so a typical command costs a handful of allocations.
 */
export function commands(line: string): string[][] {
  return commandsInto(line, new Array<string[]>());
}

/** As `commands`, added to `out`, which it answers: gathering the commands of several lines makes no array per line. */
export function commandsInto(line: string, out: string[][]): string[][] {
  let current = new Array<string>();
  let word = "";
  let inWord = false;
  const n = line.length;
  let i = 0;
  while (i < n) {
    const c = unitAt(line, i);
    const kind = classOf(c);
    if (kind == PLAIN) {
      if (c == HASH && !inWord) {
        while (i < n && unitAt(line, i) != LF) i++;
        continue;
      }
      let j = i + 1;
      while (j < n && classOf(unitAt(line, j)) == PLAIN) j++;
      word = inWord ? word + line.substring(i, j) : line.substring(i, j);
      inWord = true;
      i = j;
      continue;
    }
    if (c == BACKSLASH && i + 1 < n) {
      const next = unitAt(line, i + 1);
      i += 2;
      if (next == LF) continue;
      if (next == CR && i < n && unitAt(line, i) == LF) {
        i++;
        continue;
      }
      word += String.fromCharCode(next);
      inWord = true;
      continue;
    }
    if (c == SINGLE_QUOTE) {
      let j = line.indexOf("'", i + 1);
      if (j < 0) j = n;
      word += line.substring(i + 1, j);
      inWord = true;
      i = j + 1;
      continue;
    }
    if (c == DOUBLE_QUOTE) {
      let j = i + 1;
      let from = j;
      while (j < n && unitAt(line, j) != DOUBLE_QUOTE) {
        if (unitAt(line, j) == BACKSLASH && j + 1 < n) {
          word += line.substring(from, j);
          from = j + 1;
          j += 2;
          continue;
        }
        j++;
      }
      word += line.substring(from, j);
      inWord = true;
      i = j + 1;
      continue;
    }
    // A blank or a command separator (or a backslash ending the line) ends the word.
    if (inWord) {
      current.push(word);
      word = "";
      inWord = false;
    }
    if (kind == SEPARATOR && current.length > 0) {
      out.push(current);
      current = new Array<string>();
    }
    i++;
  }
  if (inWord) current.push(word);
  if (current.length > 0) out.push(current);
  return out;
}

/** All words of a command line, across its simple commands. */
export function words(line: string): string[] {
  const out = new Array<string>();
  const all = commands(line);
  for (let i = 0; i < all.length; i++) {
    const cmd = all[i];
    for (let j = 0; j < cmd.length; j++) out.push(cmd[j]);
  }
  return out;
}

/** The last path component: `/usr/bin/rm` → `rm`. */
export function baseName(word: string): string {
  for (let i = word.length - 1; i >= 0; i--) {
    if (unitAt(word, i) == SLASH) return word.substring(i + 1);
  }
  return word;
}

/** Whether `word` holds the character `c` (a scan, cheaper than a search for a one-character string). */
function hasChar(word: string, c: i32): bool {
  for (let i = 0, n = word.length; i < n; i++) {
    if (unitAt(word, i) == c) return true;
  }
  return false;
}

function isOption(word: string): bool {
  return word.length > 0 && unitAt(word, 0) == DASH;
}

/** Whether `option` of the wrapper `wrapper` takes the next word as its value (`sudo -u root`). */
function takesValue(wrapper: string, option: string): bool {
  if (wrapper == "sudo") return option == "-u" || option == "-g" || option == "-C" || option == "-D" || option == "-h" || option == "-p" || option == "-r" || option == "-t" || option == "-U" || option == "-T";
  if (wrapper == "doas") return option == "-u" || option == "-C";
  if (wrapper == "env") return option == "-u" || option == "-C" || option == "-S";
  if (wrapper == "nice") return option == "-n";
  if (wrapper == "xargs") return option == "-I" || option == "-L" || option == "-n" || option == "-P" || option == "-s" || option == "-d" || option == "-E" || option == "-a";
  if (wrapper == "time") return option == "-o" || option == "-f";
  return false;
}

/**
 * Whether `word` is `name` (not empty): the first units are compared in place before the whole
 * strings, since most words differ there and a string comparison is a call.
 */
// @ts-ignore: decorator
@inline
function isName(word: string, name: string): bool {
  return unitAt(word, 0) == unitAt(name, 0) && word == name;
}

// The name tests below switch on the length first: most words are no candidate's length.
function isWrapper(word: string): bool {
  switch (word.length) {
    case 3:
      return isName(word, "env");
    case 4:
      return isName(word, "sudo") || isName(word, "doas") || isName(word, "exec") || isName(word, "time") || isName(word, "nice");
    case 5:
      return isName(word, "nohup") || isName(word, "xargs");
    case 7:
      return isName(word, "command");
    default:
      return false;
  }
}

/**
 * The command a simple command runs once wrappers are skipped (`sudo -u x`, `env A=b`, `nohup`,
 * `xargs -n 1`, `command`, `exec`, `time`, `nice -n 5`, `VAR=value`): its index in `cmd`, or -1.
 */
export function commandStart(cmd: string[]): i32 {
  let i = 0;
  while (i < cmd.length) {
    const w = baseName(cmd[i]);
    if (isWrapper(w)) {
      i++;
      while (i < cmd.length && (isOption(cmd[i]) || hasChar(cmd[i], EQUALS))) {
        i += takesValue(w, cmd[i]) ? 2 : 1;
      }
      continue;
    }
    if (hasChar(cmd[i], EQUALS) && !isOption(cmd[i])) {
      i++;
      continue;
    }
    return i;
  }
  return -1;
}

function isShell(program: string): bool {
  switch (program.length) {
    case 2:
      return isName(program, "sh");
    case 3:
      return isName(program, "zsh") || isName(program, "ksh") || isName(program, "ash");
    case 4:
      return isName(program, "bash") || isName(program, "dash") || isName(program, "fish");
    default:
      return false;
  }
}

/**
 * The script a simple command hands to a shell with `-c` (`bash -lc 'git push -f'`, `sh -c "…"`),
 * or null when it runs no shell that way.
 */
export function shellScript(cmd: string[]): string | null {
  const start = commandStart(cmd);
  if (start < 0 || !isShell(baseName(cmd[start]))) return null;
  for (let i = start + 1; i < cmd.length; i++) {
    const w = cmd[i];
    if (w == "-o" || w == "+o") {
      i++;
      continue;
    }
    if (!w.startsWith("-") || w == "-" || w == "--") return null;
    if (!w.startsWith("--") && w.includes("c")) return i + 1 < cmd.length ? cmd[i + 1] : null;
  }
  return null;
}
