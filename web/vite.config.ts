// Builds the web app into web/dist, which the server serves (no CDN: everything ships in the package).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // The server's Content-Security-Policy allows scripts from its own origin only.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npm run dev:web`: the app on Vite's dev server, the API from a running `jobhouse local start`.
    proxy: { "/api": "http://127.0.0.1:5255", "/health": "http://127.0.0.1:5255" },
  },
});
