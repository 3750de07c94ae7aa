// htmx swaps only 2xx answers; the console's 4xx answers carry a notice that says
// why an action was refused, so let those be swapped too.
document.addEventListener("htmx:beforeSwap", (event) => {
  const status = event.detail.xhr.status;
  if (status >= 400 && status < 500) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
