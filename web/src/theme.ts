import {
  type CSSVariablesResolver,
  createTheme,
  DEFAULT_THEME,
  type MantineColorsTuple,
} from '@mantine/core';

/** A palette whose shade 9 is `darkest`: the other shades as Mantine has them. */
const darkened = (name: 'green' | 'yellow', darkest: string): MantineColorsTuple =>
  [...DEFAULT_THEME.colors[name].slice(0, 9), darkest] as unknown as MantineColorsTuple;

/**
 * A darker primary shade than the default keeps white button text above WCAG AA contrast (axe checks it). With
 * shade 9, a light alert's text and `c="green.9"` are shade 9: Mantine's green 9 is 4.4:1 on white and 3.8:1 on
 * its light alert, its yellow 9 under 3:1; these darker ones pass 4.5:1 on both.
 */
export const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 9,
  colors: { green: darkened('green', '#1b5e2a'), yellow: darkened('yellow', '#7a4a00') },
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
