// The convergence plot of each Optuna study of the nest: every trial's speedup, and the best so far.
(function () {
  "use strict";
  var studies = JSON.parse(document.getElementById("study-data").textContent);
  studies.forEach(function (s, k) {
    var done = s.trials.filter(function (t) { return t.speedup !== null; });
    var trials = {type: "scatter", mode: "markers", name: "trial", x: [], y: [], text: [],
                  hovertemplate: "trial %{x}: %{y:.2f}x<br>%{text}<extra></extra>", marker: {size: 7}};
    done.forEach(function (t) {
      trials.x.push(t.number); trials.y.push(t.speedup);
      trials.text.push(t.recipe ? JSON.stringify(t.recipe) : "");
    });
    var best = {type: "scatter", mode: "lines", name: "best so far", line: {shape: "hv", width: 2},
                x: s.trials.map(function (t) { return t.number; }),
                y: s.trials.map(function (t) { return t.best; })};
    var el = document.getElementById("study-" + k);
    Plotly.newPlot(el, [trials, best], {
      margin: {l: 50, r: 10, t: 10, b: 40}, xaxis: {title: {text: "trial"}},
      yaxis: {title: {text: "speedup (x)"}}, hovermode: "closest"
    }, {responsive: true, displaylogo: false}).then(function () { el.setAttribute("data-ready", "1"); });
  });
})();
