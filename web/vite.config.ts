/**
 * The console's build: one hashed module script and stylesheet under /assets (no inline script, so the CSP
 * needs no 'unsafe-inline' for scripts). `vite` (dev) proxies /api to `npm start`'s gateway.
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1500 },
  server: {
    // ws: the tenant dashboard's socket (/api/ws) goes through the same proxy.
    proxy: {
      '/api': { target: process.env.API_URL ?? 'http://127.0.0.1:3000', changeOrigin: false, ws: true },
    },
  },
});
