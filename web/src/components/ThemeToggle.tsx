// Light and dark themes: the system's choice until the user picks one, which is remembered.

import { useEffect, useState } from "react";

const KEY = "jobhouse.theme";
type Theme = "light" | "dark";

function initialTheme(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === "light" || saved === "dark") return saved;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(initialTheme);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  const other: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="theme-toggle"
      onClick={() => {
        localStorage.setItem(KEY, other);
        setTheme(other);
      }}
    >
      {other === "dark" ? "Dark theme" : "Light theme"}
    </button>
  );
}
