import { useRef, type KeyboardEvent, type ReactNode } from 'react';

export interface TabItem<K extends string> {
  key: K;
  label: string;
}

interface Props<K extends string> {
  /** Names the set of tabs for screen readers ("Sign in with"). */
  label: string;
  /** Prefix of the ids of the tabs and of the panel. */
  id: string;
  items: readonly TabItem<K>[];
  selected: K;
  onSelect: (key: K) => void;
  /** The selected tab's panel. */
  children: ReactNode;
}

/**
 * The WAI-ARIA tabs pattern: one Tab stop for the whole list (the selected tab), the arrow keys, Home and End move
 * between tabs and select them at once (the panels keep their fields' values: nothing is lost by moving), Tab goes
 * on into the panel. Only the selected panel is in the DOM.
 */
export function Tabs<K extends string>({ label, id, items, selected, onSelect, children }: Props<K>) {
  const buttons = useRef(new Map<K, HTMLButtonElement>());
  const tabId = (key: K) => `${id}-tab-${key}`;

  function onKeyDown(event: KeyboardEvent) {
    const index = items.findIndex((i) => i.key === selected);
    const last = items.length - 1;
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: last }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const target = items[(next + items.length) % items.length]!;
    onSelect(target.key);
    buttons.current.get(target.key)?.focus();
  }

  return (
    <>
      <div role="tablist" aria-label={label} className="tabs" onKeyDown={onKeyDown}>
        {items.map((item) => (
          <button
            key={item.key}
            ref={(el) => {
              if (el) buttons.current.set(item.key, el);
              else buttons.current.delete(item.key);
            }}
            type="button"
            role="tab"
            id={tabId(item.key)}
            className="tab"
            aria-selected={item.key === selected}
            aria-controls={`${id}-panel`}
            tabIndex={item.key === selected ? 0 : -1}
            onClick={() => onSelect(item.key)}
          >
            {item.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${id}-panel`} aria-labelledby={tabId(selected)} className="tab-panel">
        {children}
      </div>
    </>
  );
}
