// The paths a patch in Codex's apply_patch format writes (docs/hook-hosts.md §3). Codex sends an
// edit either as its apply_patch tool with the patch text, or, with a model it has no metadata
// for, as a shell command `apply_patch <<'EOF' … EOF` that it intercepts and applies itself.

const PATH_MARKERS = ['*** Add File: ', '*** Update File: ', '*** Delete File: ', '*** Move to: '];

/** Every path the patch adds, updates, deletes or moves to, in order, each once. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const raw of patch.split('\n')) {
    const line = raw.trim();
    for (const marker of PATH_MARKERS) {
      const trimmed = marker.trimEnd();
      if (!line.startsWith(trimmed)) continue;
      const value = line.slice(trimmed.length).trim();
      if (value !== '' && !paths.includes(value)) paths.push(value);
    }
  }
  return paths;
}

/** Whether the text has the patch envelope at all (a text without it writes nothing Codex would apply). */
export function isPatch(text: string): boolean {
  return /^\s*\*\*\* Begin Patch\b/.test(text);
}

// `[cd DIR &&] apply_patch <<'EOF'\n…\nEOF` and nothing else: the one shape Codex runs as a patch
// rather than as a shell command. The heredoc must be quoted (nothing in it expands) and must be
// all that follows.
const HEREDOC_PATCH = /^\s*(?:cd\s+('[^']*'|"[^"$`\\]*"|[^\s;&|<>()$`'"\\]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<-?\s*(['"])([A-Za-z_][A-Za-z0-9_]*)\2[ \t]*\n([\s\S]*?)\n\3[ \t]*\n?\s*$/;

/**
 * The patch of a shell command that is exactly a quoted heredoc fed to apply_patch (optionally
 * after `cd DIR &&`), with the folder it runs in; undefined for any other command, which is then
 * judged as the shell command it is.
 */
export function heredocPatch(command: string): { patch: string; cd?: string } | undefined {
  const m = HEREDOC_PATCH.exec(command);
  if (!m) return undefined;
  const dir = m[1];
  const cd = dir === undefined ? undefined : /^['"]/.test(dir) ? dir.slice(1, -1) : dir;
  return { patch: m[4]!, ...(cd !== undefined ? { cd } : {}) };
}
