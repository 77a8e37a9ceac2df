import { Routes } from '@angular/router';
import { Home } from './home';

// The report route is lazy (loadComponent): its chunk is loaded on
// navigation only, and no HTML names it.
export const routes: Routes = [
  { path: '', component: Home },
  { path: 'report', loadComponent: () => import('./report/report').then((m) => m.Report) },
];
