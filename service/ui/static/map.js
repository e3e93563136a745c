// The embedding map: one point per nest, coloured by family, best speedup or target; hover shows the
// name and best recipe, a click opens the nest; a program's nests are drawn with lines to their neighbours.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("map-data").textContent);
  var p = data.points;
  var n = p.ids.length;
  // SVG points up to this many (each is a DOM element); WebGL beyond.
  var kind = n > 4000 ? "scattergl" : "scatter";
  // Distinct colours, then shapes, so that families beyond ten do not share a look.
  var colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#b5cf6b", "#843c39", "#7b4173"];
  var symbols = ["circle", "square", "diamond", "triangle-up"];

  function hover(i) {
    var s = p.speedup[i];
    return p.names[i] + "<br>" + p.families[p.family[i]] +
      "<br>best: " + (s === null ? "no verified recipe" : s.toFixed(2) + "x " + (p.recipe[i] || ""));
  }

  function trace(indices, name, extra) {
    var t = {type: kind, mode: "markers", name: name, x: [], y: [], customdata: [], text: [],
             hovertemplate: "%{text}<extra></extra>", marker: {size: 7, opacity: 0.85}};
    indices.forEach(function (i) {
      t.x.push(p.x[i]); t.y.push(p.y[i]); t.customdata.push(p.ids[i]); t.text.push(hover(i));
    });
    return Object.assign(t, extra || {});
  }

  function groups(key) {
    var out = {};
    for (var i = 0; i < n; i++) { (out[key(i)] = out[key(i)] || []).push(i); }
    return out;
  }

  function traces() {
    var all = [];
    for (var i = 0; i < n; i++) all.push(i);
    if (data.color === "speedup") {
      var none = all.filter(function (i) { return p.speedup[i] === null; });
      var some = all.filter(function (i) { return p.speedup[i] !== null; });
      var t = trace(some, "best speedup", {showlegend: false});
      t.marker.color = some.map(function (i) { return Math.log2(p.speedup[i]); });
      t.marker.colorscale = "Viridis";
      t.marker.colorbar = {title: {text: "log2 speedup"}};
      return [trace(none, "no verified recipe", {marker: {size: 6, color: "#8a8a8a", opacity: 0.6}}), t];
    }
    if (data.color === "target") {
      var byTarget = groups(function (i) { return p.target[i] === null ? "none" : String(p.target[i]); });
      return Object.keys(byTarget).sort().map(function (k) {
        return trace(byTarget[k], k === "none" ? "no verified recipe" : (p.targets[k] || "target " + k));
      });
    }
    var byFamily = groups(function (i) { return p.family[i]; });
    return Object.keys(byFamily).map(function (k, j) {
      return trace(byFamily[k], p.families[k], {marker: {size: 7, opacity: 0.85, color: colours[j % colours.length],
                                                         symbol: symbols[Math.floor(j / 10) % symbols.length]}});
    });
  }

  function marked() {
    if (!data.marked) return [];
    var at = {};
    p.ids.forEach(function (id, i) { at[id] = i; });
    var lines = {type: "scatter", mode: "lines", name: "to its neighbours", x: [], y: [], hoverinfo: "skip",
                 line: {color: "#c0392b", width: 1.5}};
    var own = {type: "scatter", mode: "markers", name: data.marked.program, x: [], y: [], customdata: [], text: [],
               hovertemplate: "%{text}<extra></extra>",
               marker: {size: 14, symbol: "star", color: "#c0392b", line: {color: "#000", width: 1}}};
    data.marked.nests.forEach(function (nest) {
      if (!(nest.id in at)) return;
      var i = at[nest.id];
      own.x.push(p.x[i]); own.y.push(p.y[i]); own.customdata.push(nest.id); own.text.push(hover(i));
      nest.neighbours.forEach(function (h) {
        if (!(h.id in at)) return;
        lines.x.push(p.x[i], p.x[at[h.id]], null); lines.y.push(p.y[i], p.y[at[h.id]], null);
      });
    });
    return [lines, own];
  }

  var layout = {margin: {l: 40, r: 10, t: 10, b: 40}, hovermode: "closest", legend: {orientation: "v"},
                xaxis: {title: {text: "principal axis 1"}, zeroline: false},
                yaxis: {title: {text: "principal axis 2"}, zeroline: false}};
  var el = document.getElementById("map");
  Plotly.newPlot(el, traces().concat(marked()), layout, {responsive: true, displaylogo: false}).then(function () {
    el.setAttribute("data-points", String(n));
    el.setAttribute("data-ready", "1");
  });
  el.on("plotly_click", function (ev) {
    var pt = ev.points && ev.points[0];
    if (pt && pt.customdata) window.location.href = "/ui/nests/" + pt.customdata;
  });
})();
