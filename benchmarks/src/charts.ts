import * as vega from 'vega'
import * as vegaLite from 'vega-lite'
import { formatOps, type ChartDescription, type Row } from './report.js'

/**
 * One chart as SVG: a horizontal bar per row, grouped by `row.chart.group`, coloured by series
 * (the subject unless the row names one), labelled with its ops/s. Rendered headless by vega
 * (no browser, no canvas): vega-lite compiles the spec, vega's View renders it to an SVG string.
 */
export async function renderChart(description: ChartDescription, rows: readonly Row[]): Promise<string> {
  const values = rows
    .filter((row) => row.chart?.chart === description.id && row.opsPerSecond > 0)
    .map((row) => ({
      group: row.chart!.group,
      series: row.chart!.series ?? row.subject,
      ops: row.opsPerSecond,
      label: formatOps(row.opsPerSecond),
    }))
  const groups = [...new Set(values.map((v) => v.group))]
  const series = [...new Set(values.map((v) => v.series))]
  // Room on the right for the value labels of the longest bars.
  const domainMax = Math.max(...values.map((v) => v.ops)) * 1.18
  const spec: vegaLite.TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: description.title, subtitle: description.subtitle ?? '', anchor: 'start' },
    background: 'white',
    padding: 12,
    data: { values },
    width: 520,
    height: { step: 16 },
    encoding: {
      y: { field: 'group', type: 'nominal', sort: groups, title: null, axis: { labelLimit: 400 } },
      yOffset: { field: 'series', type: 'nominal', sort: series },
      x: { field: 'ops', type: 'quantitative', title: 'keys per second (median)', axis: { format: '~s' }, scale: { domain: [0, domainMax], nice: false } },
      color: { field: 'series', type: 'nominal', sort: series, title: null, legend: { orient: 'bottom', direction: 'vertical', labelLimit: 600 } },
    },
    layer: [
      { mark: { type: 'bar' } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 }, encoding: { text: { field: 'label' }, color: { value: '#333' } } },
    ],
    config: { font: 'Helvetica, Arial, sans-serif', view: { stroke: null } },
  }
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' })
  const svg = await view.toSVG()
  view.finalize()
  return svg
}
