/**
 * The page's own script, plain ES5 so any browser runs it: draw each chart from the embedded
 * JSON (every option is computed in Node; the page only hands it to ECharts) and keep the
 * charts sized to their boxes.
 */
export const PAGE_SCRIPT = `(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('stormlab-data').textContent);
  var charts = data.charts.map(function (spec) {
    var chart = echarts.init(document.getElementById(spec.id), null, { renderer: 'canvas' });
    chart.setOption(spec.option);
    return chart;
  });
  window.addEventListener('resize', function () {
    charts.forEach(function (chart) { chart.resize(); });
  });
})();`;
