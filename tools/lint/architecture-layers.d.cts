/** Types of architecture-layers.cjs for its spec. */
export interface LayerRow {
  layer: string;
  entries: string[];
}
export interface Unit {
  layer: string;
  name: string;
  paths: string[];
}
export interface UpwardRule {
  name: string;
  comment: string;
  severity: 'error';
  from: { path: string };
  to: { path: string };
}
export function readLayerTable(markdown: string): LayerRow[];
export function unitsOf(rows: LayerRow[], root: string): Unit[];
export function unplaced(units: Unit[], root: string): string[];
export function upwardRules(units: Unit[]): UpwardRule[];
export function layerRules(root: string): UpwardRule[];
