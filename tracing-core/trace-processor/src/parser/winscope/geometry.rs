//! The plane geometry Winscope's window dumps are drawn with: rectangles
//! (with rounded corners, for occlusion tests), 2-D affine transforms and
//! the comparisons with tolerance that SurfaceFlinger's float data needs.
//! Pure arithmetic; the importers turn the results into rows.

/// Distance below which two coordinates count as the same place.
pub(super) const CLOSE: f64 = 0.01;
/// Difference below which two matrix entries count as equal.
const EQUAL: f64 = 0.000_001;

/// Whether `a` and `b` are within [`CLOSE`] of each other.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < CLOSE
}

/// `a <= b`, or nearly so.
fn approx_le(a: f64, b: f64) -> bool {
    a <= b || close(a, b)
}

/// A rectangle's corner radii.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Radii {
    /// Top left.
    pub tl: f64,
    /// Top right.
    pub tr: f64,
    /// Bottom left.
    pub bl: f64,
    /// Bottom right.
    pub br: f64,
}

/// An axis-aligned rectangle, maybe with rounded corners.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width (negative when right < left).
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Its corners' radii.
    pub radii: Radii,
}

impl Rect {
    /// The rectangle between the given sides.
    pub fn ltrb(left: f64, top: f64, right: f64, bottom: f64) -> Rect {
        Rect {
            x: left,
            y: top,
            w: right - left,
            h: bottom - top,
            radii: Radii::default(),
        }
    }

    /// Whether it covers no area.
    pub fn is_empty(&self) -> bool {
        self.w <= 0.0 || self.h <= 0.0
    }

    /// Its intersection with `other` (empty, with possibly negative sides,
    /// when they do not meet).
    pub fn crop(&self, other: &Rect) -> Rect {
        Rect::ltrb(
            self.x.max(other.x),
            self.y.max(other.y),
            (self.x + self.w).min(other.x + other.w),
            (self.y + self.h).min(other.y + other.h),
        )
    }

    /// Whether every side is within [`CLOSE`] of `other`'s.
    pub fn almost_eq(&self, other: &Rect) -> bool {
        close(self.x, other.x)
            && close(self.y, other.y)
            && close(self.w, other.w)
            && close(self.h, other.h)
    }

    /// Whether `inner` lies inside this rectangle, rounded corners
    /// included: the bounding boxes nest, and at each corner where this
    /// one is rounder, the inner corner's centre lies in its circle.
    pub fn contains(&self, inner: &Rect) -> bool {
        if self.is_empty() {
            return false;
        }
        let (right, bottom) = (self.x + self.w, self.y + self.h);
        let (in_right, in_bottom) = (inner.x + inner.w, inner.y + inner.h);
        if !(approx_le(self.x, inner.x)
            && approx_le(self.y, inner.y)
            && approx_le(in_right, right)
            && approx_le(in_bottom, bottom))
        {
            return false;
        }
        let (o, i) = (self.radii, inner.radii);
        // Each corner: (outer radius, inner radius, outer centre, inner
        // centre, whether the corner is at the left, whether at the top).
        let corners = [
            (
                o.tl,
                i.tl,
                (self.x + o.tl, self.y + o.tl),
                (inner.x + i.tl, inner.y + i.tl),
                true,
                true,
            ),
            (
                o.tr,
                i.tr,
                (right - o.tr, self.y + o.tr),
                (in_right - i.tr, inner.y + i.tr),
                false,
                true,
            ),
            (
                o.bl,
                i.bl,
                (self.x + o.bl, bottom - o.bl),
                (inner.x + i.bl, in_bottom - i.bl),
                true,
                false,
            ),
            (
                o.br,
                i.br,
                (right - o.br, bottom - o.br),
                (in_right - i.br, in_bottom - i.br),
                false,
                false,
            ),
        ];
        for (ro, ri, (ox, oy), (ix, iy), left, top) in corners {
            if ro <= ri {
                continue;
            }
            // The inner centre is beyond the outer one towards the corner
            // (inclusive on the far sides, as the platform tests it).
            let beyond_x = if left { ox >= ix } else { ox < ix };
            let beyond_y = if top { oy >= iy } else { oy < iy };
            if beyond_x && beyond_y {
                let (dx, dy) = (ix - ox, iy - oy);
                if dx * dx + dy * dy > ro * ro + CLOSE {
                    return false;
                }
            }
        }
        true
    }

    /// Whether the two rectangles share some area.
    pub fn intersects(&self, other: &Rect) -> bool {
        if !(self.x < other.x + other.w
            && other.x < self.x + self.w
            && self.y <= other.y + other.h
            && other.y <= self.y + self.h)
        {
            return false;
        }
        let x = if self.x < other.x { other.x } else { self.x };
        let y = if self.y < other.y { other.y } else { self.y };
        let w = if self.x + self.w > other.x + other.w {
            other.w
        } else {
            self.w
        };
        let h = if self.y + self.h > other.y + other.h {
            other.h
        } else {
            self.h
        };
        !Rect::ltrb(x, y, w + x, h + y).is_empty()
    }
}

/// A 2-D affine transform: `x' = dsdx*x + dtdx*y + tx`,
/// `y' = dtdy*x + dsdy*y + ty`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transform {
    /// x scale.
    pub dsdx: f64,
    /// x from y.
    pub dtdx: f64,
    /// x translation.
    pub tx: f64,
    /// y from x.
    pub dtdy: f64,
    /// y scale.
    pub dsdy: f64,
    /// y translation.
    pub ty: f64,
}

impl Default for Transform {
    fn default() -> Transform {
        Transform {
            dsdx: 1.0,
            dtdx: 0.0,
            tx: 0.0,
            dtdy: 0.0,
            dsdy: 1.0,
            ty: 0.0,
        }
    }
}

impl Transform {
    /// A translation.
    pub fn translate(tx: f64, ty: f64) -> Transform {
        Transform {
            tx,
            ty,
            ..Transform::default()
        }
    }

    /// Where a point goes.
    pub fn point(&self, x: f64, y: f64) -> (f64, f64) {
        (
            self.dsdx * x + self.dtdx * y + self.tx,
            self.dtdy * x + self.dsdy * y + self.ty,
        )
    }

    /// The box spanned by a rectangle's two transformed corners (top left
    /// and bottom right).
    pub fn rect(&self, r: &Rect) -> Rect {
        let (ax, ay) = self.point(r.x, r.y);
        let (bx, by) = self.point(r.x + r.w, r.y + r.h);
        Rect::ltrb(ax.min(bx), ay.min(by), ax.max(bx), ay.max(by))
    }

    /// The inverse transform (infinite entries when singular).
    pub fn inverse(&self) -> Transform {
        let k = 1.0 / (self.dsdx * self.dsdy - self.dtdx * self.dtdy);
        let mut inv = Transform {
            dsdx: self.dsdy * k,
            dtdx: -self.dtdx * k,
            tx: 0.0,
            dtdy: -self.dtdy * k,
            dsdy: self.dsdx * k,
            ty: 0.0,
        };
        let (tx, ty) = inv.point(-self.tx, -self.ty);
        inv.tx = tx;
        inv.ty = ty;
        inv
    }

    /// Whether it is invertible (its determinant is not nearly 0).
    pub fn is_valid(&self) -> bool {
        (self.dsdx * self.dsdy - self.dtdx * self.dtdy).abs() >= EQUAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crop_and_intersection() {
        let a = Rect::ltrb(0.0, 0.0, 10.0, 10.0);
        let b = Rect::ltrb(5.0, 5.0, 20.0, 20.0);
        assert_eq!(a.crop(&b), Rect::ltrb(5.0, 5.0, 10.0, 10.0));
        assert!(a.intersects(&b));
        assert!(!a.intersects(&Rect::ltrb(10.0, 0.0, 20.0, 10.0)));
        assert!(a.crop(&Rect::ltrb(20.0, 20.0, 30.0, 30.0)).is_empty());
    }

    #[test]
    fn containment_respects_rounded_corners() {
        let mut outer = Rect::ltrb(0.0, 0.0, 10.0, 10.0);
        let inner = Rect::ltrb(0.0, 0.0, 10.0, 10.0);
        assert!(outer.contains(&inner));
        outer.radii.tl = 5.0;
        assert!(!outer.contains(&inner));
        assert!(outer.contains(&Rect::ltrb(2.0, 2.0, 8.0, 8.0)));
        assert!(!Rect::default().contains(&inner));
    }

    #[test]
    fn transforms_invert() {
        let t = Transform {
            dsdx: 0.0,
            dtdx: -1.0,
            tx: 5.0,
            dtdy: 1.0,
            dsdy: 0.0,
            ty: 2.0,
        };
        let inv = t.inverse();
        let (x, y) = t.point(3.0, 4.0);
        let (bx, by) = inv.point(x, y);
        assert!((bx - 3.0).abs() < 1e-9 && (by - 4.0).abs() < 1e-9);
        assert!(t.is_valid());
        let singular = Transform {
            dsdx: 1.0,
            dtdx: 1.0,
            tx: 0.0,
            dtdy: 1.0,
            dsdy: 1.0,
            ty: 0.0,
        };
        assert!(!singular.is_valid());
        assert_eq!(
            Transform::translate(1.0, 2.0).rect(&Rect::ltrb(0.0, 0.0, 3.0, 4.0)),
            Rect::ltrb(1.0, 2.0, 4.0, 6.0)
        );
    }
}
