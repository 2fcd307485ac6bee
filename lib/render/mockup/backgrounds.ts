// The mockup's named backgrounds (docs/api.md, "Mockups", with a picture of each). A request names
// one of these or gives a hex colour. Kept apart from mockup.ts so that the request schemas can
// check names without loading the browser.

export const BACKGROUND_PRESETS = {
  /** Violet -> pink -> peach, diagonal (the default). */
  gradient: "linear-gradient(135deg, #a78bfa 0%, #f472b6 52%, #fdba74 100%)",
  /** Sky blue -> indigo. */
  ocean: "linear-gradient(135deg, #38bdf8 0%, #6366f1 100%)",
  /** Orange -> pink -> violet. */
  sunset: "linear-gradient(135deg, #fb923c 0%, #ec4899 55%, #8b5cf6 100%)",
  /** Emerald -> deep teal. */
  forest: "linear-gradient(135deg, #34d399 0%, #0f766e 100%)",
  /** Soft pastel light: cyan, lavender and pink glows on a pale ground. */
  aurora:
    "radial-gradient(at 15% 15%, #a5f3fc 0, transparent 55%), radial-gradient(at 85% 10%, #c4b5fd 0, transparent 55%), radial-gradient(at 75% 95%, #f9a8d4 0, transparent 60%), #eef2ff",
  /** Deep navy with an indigo glow: for light pages and dark-mode shots alike. */
  midnight: "radial-gradient(at 30% 20%, #3730a3 0, transparent 60%), linear-gradient(160deg, #111827 0%, #020617 100%)",
  /** Quiet light grey, near white: for documents and decks. */
  slate: "linear-gradient(180deg, #f8fafc 0%, #e2e8f0 100%)",
} as const;

export type BackgroundPreset = keyof typeof BACKGROUND_PRESETS;

export const isBackgroundPreset = (value: string): value is BackgroundPreset => Object.hasOwn(BACKGROUND_PRESETS, value);
