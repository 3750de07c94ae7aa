// htmx swaps only 2xx answers; the console's 4xx answers carry a notice that says
// why an action was refused, so let those be swapped too.
document.addEventListener("htmx:beforeSwap", (event) => {
  const status = event.detail.xhr.status;
  if (status >= 400 && status < 500) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});

// Analytics charts: each canvas[data-chart] names the json_script element with
// its Chart.js data. chart.umd.min.js loads (deferred) only on pages with charts.
window.addEventListener("load", () => {
  if (typeof Chart === "undefined") return;
  for (const canvas of document.querySelectorAll("canvas[data-chart]")) {
    const data = JSON.parse(document.getElementById(canvas.dataset.chart).textContent);
    new Chart(canvas, {
      type: "line",
      data,
      options: {
        animation: false,
        spanGaps: true,
        scales: { y: { beginAtZero: true, title: { display: true, text: canvas.dataset.unit } } },
      },
    });
  }
});

// Copy buttons: button[data-copy] names (a selector) what it copies; it says
// "Copied" once the clipboard has it, or why not.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const text = document.querySelector(button.dataset.copy).textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
    button.dataset.copied = "true";
  } catch (error) {
    button.textContent = `Not copied: ${error.message}`;
  }
});
