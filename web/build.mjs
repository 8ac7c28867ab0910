// Copies the interface's third-party browser modules from node_modules into serve/web/vendor,
// where the Serve ingress serves them (offline: no CDN). Run by `make web` (npm ci && npm run build).
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "serve", "web", "vendor");
mkdirSync(vendor, { recursive: true });
const files = [
  ["cytoscape/dist/cytoscape.esm.min.mjs", "cytoscape.esm.min.mjs"],
  ["cytoscape/LICENSE", "cytoscape.LICENSE.txt"],
];
for (const [from, to] of files) {
  copyFileSync(join(here, "node_modules", from), join(vendor, to));
  console.log(`web: ${from} -> serve/web/vendor/${to}`);
}
