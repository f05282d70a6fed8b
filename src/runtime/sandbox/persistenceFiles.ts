// Persistence files (policy-format.md, "Sandboxed commands", Writes): files that run code later,
// or configure what runs, when a person next opens the folder, commits, builds or starts a shell.
// A command or a file tool that writes one would act long after the policy judged it, so they
// are protected like the policy files (protected.ts): always asked, never allowed for the
// session, and read-only in the sandbox however a command names them. docs/sandbox.md lists them.
import * as path from 'node:path';

/**
 * Workspace-relative; an entry ending in `/` is a folder (everything under it). The policy adds
 * its own with the top-level `"persistenceFiles"`.
 */
export const WORKSPACE_PERSISTENCE_FILES: readonly string[] = [
  // git: hooks run on commit, checkout and push; the configuration names programs (core.pager, …); submodules are fetched.
  '.git/hooks/', '.git/config', '.gitmodules',
  // Editors and containers: tasks, launch configurations, extensions' settings, dev containers.
  '.vscode/', '.idea/', '.devcontainer/',
  // Run on entering the folder (direnv) or on commit (husky), and by CI with the repository's secrets.
  '.envrc', '.husky/', '.github/workflows/',
  // Other agents' settings, hooks and MCP servers.
  '.claude/', '.codex/', '.gemini/', '.cursor/', '.mcp.json',
];

/**
 * The shell's start-up files, relative to the home folder: run by every new shell. Outside the
 * workspace the sandbox keeps them read-only already and the file tools cannot reach them; where
 * the workspace is the home folder they are inside it, and this is what protects them.
 */
export const HOME_STARTUP_FILES: readonly string[] = [
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile',
  '.zshrc', '.zshenv', '.zprofile', '.zlogin',
  '.config/fish/config.fish', '.config/fish/conf.d/',
];

/** The home start-up files, absolute (a folder keeps its trailing `/`). */
export function homeStartupPaths(home: string): string[] {
  return HOME_STARTUP_FILES.map((f) => path.join(home, f) + (f.endsWith('/') ? '/' : ''));
}
