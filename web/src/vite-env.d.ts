// Vite's ambient types, for the CSS main.tsx imports: TypeScript checks side-effect imports (6.0 and later).
/// <reference types="vite/client" />
