/** One measured figure of `npm run bench`: a value beside a baseline measured in the same run, and their ratio. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline: number;
  baselineUnit: string;
  ratio: number;
  note?: string;
}
