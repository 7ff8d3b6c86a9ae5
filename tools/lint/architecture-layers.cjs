// @ts-check
/**
 * Reads the "Layers" table of docs/architecture.md and turns it into dependency-cruiser rules, so the
 * document is the one place the layer order is written and `npm run lint` checks the code against it.
 * CommonJS and plain JavaScript because dependency-cruiser loads its configuration with require().
 */
const fs = require('node:fs');
const path = require('node:path');

/** What a backticked entry of the table may be: a module's name, a file of src/ or a folder of src/ ending in `/`. */
const ENTRY = /^[a-z0-9][a-z0-9.-]*\/?$/;

/**
 * @typedef {{ layer: string, entries: string[] }} LayerRow
 * @typedef {{ layer: string, name: string, paths: string[] }} Unit
 */

/**
 * The table's rows top to bottom: each layer's name and the backticked entries of its second column.
 * @param {string} markdown docs/architecture.md
 * @returns {LayerRow[]}
 */
function readLayerTable(markdown) {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Layers\n'));
  if (section === undefined) {
    throw new Error('docs/architecture.md has no "## Layers" section');
  }
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) => line.split('|').map((cell) => cell.trim()))
    // The header and the row of dashes under it.
    .slice(2);
  if (rows.length === 0) {
    throw new Error('the "Layers" section of docs/architecture.md has no table');
  }
  return rows.map((cells) => {
    const layer = cells[1];
    const entries = [...cells[2].matchAll(/`([^`]+)`/g)].map((match) => match[1]);
    const odd = entries.filter((entry) => !ENTRY.test(entry));
    if (odd.length > 0) {
      throw new Error(
        `layer "${layer}" of docs/architecture.md: ${odd.join(', ')} is not a module, a file or a folder of src/; ` +
          'the second column backticks nothing else',
      );
    }
    return { layer, entries };
  });
}

/**
 * The path an entry names: a folder of src/modules when it is a module (or will be one: a layer may hold a
 * module before its folder exists), otherwise a file or folder of src/.
 * @param {string} entry
 * @param {string} root the repository
 */
function pathOf(entry, root) {
  if (entry.endsWith('/')) {
    return `src/${entry}`;
  }
  if (entry.endsWith('.ts')) {
    return `src/${entry}`;
  }
  if (fs.existsSync(path.join(root, 'src', entry))) {
    return `src/${entry}/`;
  }
  return `src/modules/${entry}/`;
}

/**
 * The units of the order, top to bottom. The first row (the entrypoints) is one unit whose files import each
 * other; every other entry is a unit of its own.
 * @param {LayerRow[]} rows
 * @param {string} root
 * @returns {Unit[]}
 */
function unitsOf(rows, root) {
  const names = rows.flatMap((row) => row.entries);
  const twice = names.filter((name, index) => names.indexOf(name) !== index);
  if (twice.length > 0) {
    throw new Error(`the Layers table of docs/architecture.md places ${twice.join(', ')} more than once`);
  }
  const [top, ...rest] = rows;
  return [
    { layer: top.layer, name: top.layer, paths: top.entries.map((entry) => pathOf(entry, root)) },
    ...rest.flatMap((row) =>
      row.entries.map((entry) => ({ layer: row.layer, name: entry, paths: [pathOf(entry, root)] })),
    ),
  ];
}

/**
 * Every folder of src/modules, and every folder and non-test file of src/, that no unit holds: a module the
 * table does not place would escape every rule.
 * @param {Unit[]} units
 * @param {string} root
 */
function unplaced(units, root) {
  const placed = new Set(units.flatMap((unit) => unit.paths));
  const list = (folder) =>
    fs
      .readdirSync(path.join(root, folder), { withFileTypes: true })
      .filter((item) => item.isDirectory() || (item.name.endsWith('.ts') && !item.name.endsWith('.spec.ts')))
      .map((item) => `${folder}/${item.name}${item.isDirectory() ? '/' : ''}`);
  return [...list('src'), ...list('src/modules')]
    .filter((found) => found !== 'src/modules/' && !placed.has(found))
    .sort();
}

/** @param {string} text */
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** @param {string[]} paths */
const pattern = (paths) => `^(${paths.map((p) => (p.endsWith('/') ? escape(p) : `${escape(p)}$`)).join('|')})`;

/**
 * One rule per unit: nothing it imports is held by a unit above it.
 * @param {Unit[]} units
 */
function upwardRules(units) {
  return units.slice(1).map((unit, index) => ({
    name: 'no-upward-import',
    comment: `${unit.name} (layer ${unit.layer}) imports only what the Layers table of docs/architecture.md lists after it`,
    severity: /** @type {const} */ ('error'),
    from: { path: pattern(unit.paths) },
    to: { path: pattern(units.slice(0, index + 1).flatMap((above) => above.paths)) },
  }));
}

/**
 * The layer order of docs/architecture.md as dependency-cruiser rules; throws when a folder of src/ has no place.
 * @param {string} root the repository
 */
function layerRules(root) {
  const units = unitsOf(readLayerTable(fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8')), root);
  const missing = unplaced(units, root);
  if (missing.length > 0) {
    throw new Error(`the Layers table of docs/architecture.md places none of: ${missing.join(', ')}`);
  }
  return upwardRules(units);
}

module.exports = { readLayerTable, unitsOf, unplaced, upwardRules, layerRules };
