import { type CSSVariablesResolver, createTheme } from '@mantine/core';

/** A darker primary shade than the default keeps white button text above WCAG AA contrast (axe checks it). */
export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 9,
  defaultRadius: 'sm',
  // No modal or popover animation for people who asked their system for less motion.
  respectReducedMotion: true,
});

/** Mantine's dimmed text (gray 6) and error text (red 6) fall below AA contrast on white: shades 7 and 9 do not. */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
  },
  dark: {},
});
