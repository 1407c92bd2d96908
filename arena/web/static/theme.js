// Six Arena: the reader's colour theme (light, dark, or the system's), applied before
// the page is drawn: this file is loaded in <head> without defer, so a dark page never
// flashes white. The header's control (site.js) changes it through window.arenaTheme.
"use strict";

(function () {
  const KEY = "arena-theme";
  const CHOICES = ["system", "light", "dark"];

  function read() {
    try {
      const stored = localStorage.getItem(KEY);
      return CHOICES.includes(stored) ? stored : "system";
    } catch (error) {
      return "system"; // storage refused (a privacy setting): the system's theme
    }
  }

  function apply(choice) {
    const root = document.documentElement;
    if (choice === "light" || choice === "dark") root.dataset.theme = choice;
    else delete root.dataset.theme;
  }

  function choose(choice) {
    try {
      if (choice === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, choice);
    } catch (error) {
      // not remembered, but still applied to this page
    }
    apply(choice);
  }

  apply(read());
  window.arenaTheme = { CHOICES, read, choose };
})();
